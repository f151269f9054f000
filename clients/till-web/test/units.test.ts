// The till's pure parts under Node's test runner: amounts typed by a person, the pairing
// address, and the sale body built from a quote. Bundled by esbuild (test.mjs), run by node.

import assert from "node:assert/strict";
import { test } from "node:test";
import { pairingFromFragment } from "../src/device.js";
import { amountText, parseEuros, setLang, money } from "../src/i18n.js";
import { saleBody } from "../src/sale.js";
import type { PriceQuote } from "../../typescript/src/pricing/index.js";

test("amounts typed in euros become integer cents, anything else is refused", () => {
  const cases: [string, number | null][] = [
    ["12", 1200],
    ["12,5", 1250],
    ["12.05", 1205],
    ["0", 0],
    [" 1 000,00 ", 100000],
    ["50.", 5000],
    ["", null],
    ["-1", null],
    ["1e3", null],
    ["12,345", null],
    ["12.3.4", null],
    ["abc", null],
    ["9999999999", null],
    ["12,50", 1250],
    ["12.50", 1250],
    ["0,05", 5],
    ["0.1", 10],
    ["19,99", 1999],
    ["1\u202f234,56", 123456],
    ["12,50 €", 1250],
    ["€12.50", 1250],
    ["12,", 1200],
    [",50", null],
    ["12,5,0", null],
    ["1.234,56", null],
    ["1,234.56", null],
    ["+12", null],
    ["12 €€", null],
    ["0x10", null],
    ["Infinity", null],
  ];
  for (const [typed, cents] of cases) assert.equal(parseEuros(typed), cents, JSON.stringify(typed));
});

test("the amount a field is prefilled with is the language's, and reads back to the same cents", () => {
  setLang("fr");
  assert.equal(amountText(1250), "12,50");
  assert.equal(amountText(5), "0,05");
  assert.equal(amountText(123456), "1234,56");
  assert.equal(amountText(0), "0,00");
  setLang("en");
  assert.equal(amountText(1250), "12.50");
  assert.equal(amountText(100000), "1000.00");
  // Every amount up to 1 000 € and some large ones, in both languages: no float rounding.
  for (const lang of ["fr", "en"] as const) {
    setLang(lang);
    for (let cents = 0; cents <= 100000; cents++) assert.equal(parseEuros(amountText(cents)), cents);
    for (const cents of [999999999, 123456789, 100000000]) assert.equal(parseEuros(amountText(cents)), cents);
  }
});

test("amounts are written in the till's language", () => {
  setLang("en");
  assert.equal(money(123456), "€1,234.56");
  setLang("fr");
  assert.equal(money(123456).replace(/\s/g, " "), "1 234,56 €");
});

test("the pairing address carries a token, a store and a register, or nothing", () => {
  const now = new Date("2026-11-29T10:00:00Z");
  assert.deepEqual(pairingFromFragment("#pair=eyJ.a.b&store=paris-marais&register=till-3", now), {
    token: "eyJ.a.b",
    storeId: "paris-marais",
    registerId: "till-3",
    pairedAt: "2026-11-29T10:00:00.000Z",
  });
  assert.equal(pairingFromFragment("#pair=eyJ&store=paris-marais", now), null);
  assert.equal(pairingFromFragment("#store=s&register=r", now), null);
  assert.equal(pairingFromFragment("", now), null);
  assert.equal(pairingFromFragment("#pair=%20&store=s&register=r", now), null);
  assert.equal(pairingFromFragment("#pair=a%2Bb&store=s%26t&register=r", now)?.storeId, "s&t");
});

test("the sale body carries the quote's prices, the session and the cash tender", () => {
  const quote = {
    lines: [
      { id: "l1", skuId: "mug", quantity: 1, unitPrice: 1450, vatRate: 20, grossCents: 1450, promotionCents: 0, discountCents: 0, ticketCents: 0, netCents: 1450 },
      { id: "l2", skuId: "bread", quantity: 2, unitPrice: 130, vatRate: 5.5, grossCents: 260, promotionCents: 0, discountCents: 0, ticketCents: 0, netCents: 260 },
    ],
    adjustments: [],
    totals: { subtotal: 1710, total: 1710, itemCount: 3, lineCount: 2 },
    vat: [],
  } as unknown as PriceQuote;
  const body = saleBody({
    transactionId: "t-1",
    number: "T-till-3-000001",
    session: { sessionId: "ses_1", token: "pos_st_x", storeId: "paris-marais", registerId: "till-3", cashierSubject: "camille", expiresAt: "" },
    issuedAt: "2026-11-29T10:00:00.000Z",
    cart: [
      { id: "l1", skuId: "mug", name: "Mug", quantity: 1 },
      { id: "l2", skuId: "bread", name: "Baguette", quantity: 2 },
    ],
    quote,
    tenders: [{ method: "cash", applied: 1710, presented: 2000, change: 290 }],
  });
  assert.equal(body.sessionId, "ses_1");
  assert.equal(body.sellerId, "camille");
  assert.equal(body.registerId, "till-3");
  assert.equal(body.customerId, null);
  assert.deepEqual(body.cart.lines.map((l) => [l.id, l.quantity, l.unitPrice, l.vatRate, l.free]), [
    ["l1", 1, 1450, 20, false],
    ["l2", 2, 130, 5.5, false],
  ]);
  assert.deepEqual(body.tenders, {
    amountDue: 1710,
    sequence: 1,
    tenders: [{ id: "p1", method: "cash", applied: 1710, presented: 2000, change: 290, forfeited: 0 }],
  });
  // The token never goes into the body.
  assert.ok(!JSON.stringify(body).includes("pos_st_"));
});

test("mixed tenders: cash pays up to what is due, a card tender cites its attempt", async () => {
  const { cashTender, cardTender, changeDue, remaining } = await import("../src/payment.js");
  const quote = { lines: [], adjustments: [], totals: { subtotal: 4210, total: 4210, itemCount: 1, lineCount: 1 }, vat: [] } as unknown as PriceQuote;
  const payment = { transactionId: "t-2", issuedAt: "2026-11-29T10:00:00.000Z", quote, tenders: [cashTender(4210, 2000)] };
  assert.deepEqual(payment.tenders[0], { method: "cash", applied: 2000, presented: 2000, change: 0 });
  assert.equal(remaining(payment), 2210);
  payment.tenders.push(cardTender("pay-1", 2210));
  assert.equal(remaining(payment), 0);
  assert.deepEqual(cashTender(1710, 2000), { method: "cash", applied: 1710, presented: 2000, change: 290 });
  assert.equal(changeDue([cashTender(1710, 2000)]), 290);
  const body = saleBody({
    transactionId: "t-2",
    number: "T-till-3-000002",
    session: { sessionId: "ses_1", token: "pos_st_x", storeId: "paris-marais", registerId: "till-3", cashierSubject: "camille", expiresAt: "" },
    issuedAt: payment.issuedAt,
    cart: [],
    quote,
    tenders: payment.tenders,
  });
  assert.deepEqual(body.tenders.tenders.map((t) => [t.id, t.method, t.applied, t.presented, t.change, t.reference ?? null]), [
    ["p1", "cash", 2000, 2000, 0, null],
    ["p2", "card", 2210, 2210, 0, "pay-1"],
  ]);
  assert.equal(body.tenders.amountDue, 4210);
});

test("a return refunds what each unit was paid, as the server prorates it", async () => {
  const { prorate, refundOf, registerOfNumber, returnBody } = await import("../src/returns.js");
  // 1000 over 3 units: 333, 334, 333 (cumulative, half away from zero), adding up to 1000.
  assert.deepEqual([prorate(1000, 3, 0, 1), prorate(1000, 3, 1, 1), prorate(1000, 3, 2, 1)], [333, 334, 333]);
  assert.equal(prorate(1000, 3, 0, 3), 1000);
  assert.equal(prorate(260, 2, 1, 1), 130);
  assert.equal(registerOfNumber("T-till-3-000042"), "till-3");
  assert.equal(registerOfNumber("hello"), null);
  const draft = {
    transactionId: "r-1",
    originalTransactionId: "t-1",
    originalNumber: "T-till-3-000001",
    lines: [
      { lineId: "l1", skuId: "mug", label: "Mug", quantity: 1, returned: 0, netCents: 1450, take: 0 },
      { lineId: "l2", skuId: "bread", label: "Baguette", quantity: 3, returned: 1, netCents: 1000, take: 1 },
    ],
  };
  assert.equal(refundOf(draft), 334);
  const body = returnBody({
    draft,
    number: "T-till-3-000009",
    session: { sessionId: "ses_1", token: "pos_st_x", storeId: "paris-marais", registerId: "till-3", cashierSubject: "camille", expiresAt: "" },
    method: "credit_note",
  });
  assert.deepEqual(body.lines, [{ lineId: "l2", quantity: 1 }]);
  assert.deepEqual(body.tenders, { amountDue: 334, sequence: 1, tenders: [{ id: "r1", method: "credit_note", applied: 334, presented: 334, change: 0, forfeited: 0 }] });
});
