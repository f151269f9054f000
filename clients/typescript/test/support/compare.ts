// One cart priced both ways, and whether the two answers are the same: every line, total,
// adjustment and VAT figure to the cent for a price; the same status, code and sentence (and
// field errors) for a refusal.

import { isDeepStrictEqual } from "node:util";
import type { Pricer, PriceResult } from "../../src/pricing/index.js";
import { offlineCart, requestBody, type TestCart } from "./carts.js";
import type { Answer, Server } from "./server.js";
import type { World } from "./world.js";

export interface Comparison {
  same: boolean;
  server: Answer;
  /** The offline result as the server would have written it. */
  offline: Answer;
  result: PriceResult;
}

export async function compare(server: Server, world: World, pricer: Pricer, cart: TestCart): Promise<Comparison> {
  const online = await server.request("POST", "/v1/checkout/price", requestBody(cart));
  const result = pricer.price(offlineCart(cart, world));
  const offline = asAnswer(result);
  return { same: isDeepStrictEqual(normalize(online), offline), server: online, offline, result };
}

function asAnswer(result: PriceResult): Answer {
  if (result.ok) {
    return { status: 200, body: result.quote };
  }
  const { code, statusCode, message, fieldErrors } = result.refusal;
  const error: Record<string, unknown> = { code, message, statusCode };
  if (fieldErrors !== undefined) {
    error["fieldErrors"] = fieldErrors;
  }
  return { status: statusCode, body: { error } };
}

/** The server's answer with an absent and a null `fieldErrors` read alike. */
function normalize(answer: Answer): Answer {
  const body = answer.body as { error?: Record<string, unknown> } | null;
  if (answer.status >= 400 && body?.error !== undefined) {
    const { fieldErrors, ...rest } = body.error;
    return { status: answer.status, body: { error: fieldErrors == null ? rest : { ...rest, fieldErrors } } };
  }
  return answer;
}
