// The customer at the counter: found by phone, name or e-mail (the directory's search), or by
// the loyalty card's number (the card carries the customer's id), then attached to the sale.
// Read with the device token: a cashier's role holds no `pos.customers.read`.

import { TillError } from "../../typescript/src/client.js";
import type { ResponseBody, TillClient } from "../../typescript/src/client.js";

export type CustomerView = ResponseBody<"getCustomer", 200>;

/** What the sale keeps of its customer: the id it books, the groups it prices with, the points. */
export interface SaleCustomer {
  customerId: string;
  displayName: string;
  groups: string[];
  loyaltyPoints: number;
}

export function saleCustomer(view: CustomerView): SaleCustomer {
  return {
    customerId: view.customerId,
    displayName: view.displayName ?? view.customerId,
    groups: [...(view.groups ?? [])],
    loyaltyPoints: view.loyaltyPoints ?? 0,
  };
}

/** The customers a text finds: the card's id first (when it is one), then the directory's search. */
export async function findCustomers(client: TillClient, text: string): Promise<CustomerView[]> {
  const query = text.trim();
  if (query === "") return [];
  const found: CustomerView[] = [];
  if (!/\s/.test(query)) {
    try {
      found.push(await client.json<CustomerView>("GET", `/v1/customers/${encodeURIComponent(query)}`));
    } catch (error) {
      // Not a card's id (404), or not an id at all (400): the search says the rest.
      if (!(error instanceof TillError && (error.status === 404 || error.status === 400))) throw error;
    }
  }
  const page = await client.json<{ items: CustomerView[] }>("GET", "/v1/customers", { query: { q: query, limit: 10 } });
  for (const item of page.items) if (!found.some((c) => c.customerId === item.customerId)) found.push(item);
  return found.filter((c) => c.erasedAt === null || c.erasedAt === undefined);
}
