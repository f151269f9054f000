// The pricing test's server: the harness's `till serve` (test/harness/till.ts), a token for
// the scopes the test uses, and requests through node:http's kept-alive connections.

import { Agent, request as httpRequest } from "node:http";
import { TillProcess } from "../harness/till.js";

const SCOPES = [
  "pos.catalog.read",
  "pos.catalog.write",
  "pos.stores.write",
  "pos.promotions.read",
  "pos.promotions.write",
  "pos.coupons.write",
  "pos.customers.write",
  "pos.sales.finalize",
  "pos.staff.write",
  "pos.sessions.open",
];

export interface Answer {
  status: number;
  body: unknown;
}

export interface Server {
  base: string;
  /** A bearer token with every scope the test uses. */
  token: string;
  request(method: string, path: string, body?: unknown, token?: string): Promise<Answer>;
  /** Like `request`, but a status other than 2xx fails. */
  ok<T>(method: string, path: string, body?: unknown, token?: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startServer(): Promise<Server> {
  const till = await TillProcess.start();
  const base = till.base;
  const token = till.mint("pricing-test", SCOPES);

  // Kept-alive connections, one per request in flight: fetch costs this client more CPU per
  // request than node:http, and the client shares the machine with the server.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const request = (method: string, path: string, body?: unknown, bearer = token): Promise<Answer> =>
    new Promise((answer, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string | number> = { authorization: `Bearer ${bearer}` };
      if (payload !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(payload);
      }
      const sent = httpRequest(`${base}${path}`, { method, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          answer({ status: response.statusCode ?? 0, body: text.length > 0 ? JSON.parse(text) : null });
        });
        response.on("error", reject);
      });
      sent.on("error", reject);
      sent.end(payload);
    });
  const ok = async <T>(method: string, path: string, body?: unknown, bearer = token): Promise<T> => {
    const answer = await request(method, path, body, bearer);
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer.body as T;
  };
  const stop = async (): Promise<void> => {
    agent.destroy();
    await till.destroy();
  };
  return { base, token, request, ok, stop };
}

export { inPool } from "../harness/till.js";
