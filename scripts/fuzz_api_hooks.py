"""schemathesis hooks for scripts/fuzz-api.

One hook, narrow on purpose: it drops a `positive_data_acceptance` finding ("schema-valid
request rejected") only when the server refused a request that the document cannot call invalid,
for a rule of the service that JSON Schema has no words for, and only for the operation and the
exact refusal listed below. Every other check, and every other refusal, stands.

- Rules between fields or between items, stated in the descriptions but not expressible as a
  schema: `validUntil` not before `validFrom`, an archive's or an export's `to` within a year after `from`, ids
  unique within a list (a tender method counted once at a close, a barcode once on an article
  in any of its forms, an article once in a count, a transfer or its receipt), a transfer
  between two different stores, a barcode's check digit, a SIREN's check digit and a French VAT
  number's key and SIREN, a SIRET of the SIREN given, a French postal code of 5 digits, a discount's `lineId` naming
  in any of its forms), a barcode's check digit, a catalog search holding a letter or a digit, a discount's `lineId` naming
  a line of the same cart, a return naming another transaction than its own, an e-mail
  address (stated by its format, which generators do not hold to), a customer's phone number
  in any of its forms and birth date on the calendar (stated in their descriptions).
- Rules on the data the server holds, which no request schema can know: a list's cursor that
  the list never handed out (cursors are opaque), a store of the network
  (once the network has one), a PIN for a staff member not seen before, the business refusals
  (422: an unknown session, article or sale, an empty or mispriced cart, a coupon past its
  limit, a gift card, credit note or points that cannot pay), the elevation channel's codes,
  `If-Match` naming a version the rule is no longer at (412), a gift card issued with a code
  already given (409), a barcode another article carries (409), a cash movement's id used
  before for another movement (409), a count's or a transfer's id used before for another one
  (409), a transfer received before with other quantities (409), an article not in the catalog
  in a count or a transfer, or a receipt that does not state exactly the transfer's articles
  (422), a
  session's drawer once the session closed (422), and a price (the catalog's or a store's) whose `effectiveFrom` is already
  past by the server's clock, or a new article's first price set to start later (422); a
  sale's `issuedAt` older than the hours a sale may wait or ahead of the server's clock (422); a report
  that starts after the current quarter hour, a replay from past the feed's last event, and a
  webhook URL whose host is, or resolves to, an address this deployment does not deliver to; a
  card payment for a session that is not open, or an approval of an amount its attempt did not
  ask (422), and a card number in a payment's free text (a run of twelve digits or more); an
  export (FEC, e-reporting) of a period holding a day its register has not closed yet (422); a
  receipt sent by e-mail where no mail server is configured, or to a sale's customer who did not
  consent (422), or under a send id of another sale (409); an invoice of an unknown store or
  sale, of a store whose seller identity is not complete (422), of a ticket on another invoice
  or under an invoice id used for another request (409); or
  an archive or export whose `to` is after today by the server's clock (400); a new store's,
  register's or staff member's id that would steer an address (ids made before stay valid).
"""

from __future__ import annotations

import fnmatch

import schemathesis

# A list's cursor is opaque: only one the list handed out, under the same filters, reads back.
# The document gives its alphabet and length; which strings the server handed out, it cannot.
# A new store's, register's or staff member's id is refused where it would steer an address; ids
# made before the rule stay valid, so the document cannot narrow the parameter.
_NEW_ID = [
    "must be at most 64 characters",
    "must not contain *",
    "must not contain .. nor be .",
    "must not contain spaces or control characters",
]

_CURSORS = [
    ("cursor", "is not a cursor this server handed out"),
    ("cursor", "was not handed out by this list with these filters; start again from the first page"),
]

# Field errors a 400 may carry for a schema-valid request: (dot path pattern, message).
_BETWEEN_FIELDS = {
    # What an e-mail address is (RFC 5322's forms, a domain with a dot) has no pattern that
    # JSON Schema's generators honour; the document states it by its format.
    "POST /v1/sales/{transactionId}/receipt/send": [("email", "must be an e-mail address with a domain")],
    # A phone number's forms (separators anywhere, a trunk zero or a country code, the digits a
    # country allows) and a day of the calendar (no 30 February) are stated in the descriptions.
    "PUT /v1/customers/{customerId}": [
        ("email", "must be an e-mail address with a domain"),
        ("phone", "must be a phone number: *"),
        ("birthDate", "must be a date, YYYY-MM-DD"),
    ],
    "POST /v1/catalog/import": [
        ("skus.*.skuId", "appears more than once in the import"),
        ("skus.*.barcodes.*", "has a wrong check digit"),
        ("skus.*.barcodes.*", "is the same barcode as barcodes.*"),
    ],
    "PUT /v1/catalog/skus/{skuId}": [
        ("barcodes.*", "has a wrong check digit"),
        ("barcodes.*", "is the same barcode as barcodes.*"),
    ],
    "GET /v1/catalog/barcodes/{code}": [("code", "has a wrong check digit")],
    "POST /v1/checkout/finalize": [
        ("storeId", "is not a store of the network"),
        ("cart.lines.*.id", "is already the id of another line"),
        ("declaredDiscounts.*.lineId", "does not match the id of any cart line"),
        # A gift card tender's reference is a code, unless another system keeps gift cards.
        ("tenders.tenders.*.reference", "must be 4 to 64 letters, digits, `-` or `_`"),
    ],
    "POST /v1/checkout/price": [
        ("storeId", "is not a store of the network"),
        ("cart.lines.*.id", "is already the id of another line"),
        ("declaredDiscounts.*.lineId", "does not match the id of any cart line"),
    ],
    "POST /v1/register-sessions": [
        ("storeId", "is not a store of the network"),
        *[("registerId", message) for message in _NEW_ID],
    ],
    "POST /v1/returns": [
        ("storeId", "is not a store of the network"),
        ("originalTransactionId", "must name another transaction than the return's own"),
        ("lines.*.lineId", "names a line already named in this return"),
        ("tenders.tenders.*.reference", "must be 4 to 64 letters, digits, `-` or `_`"),
    ],
    "POST /v1/promotions": [
        ("validUntil", "must not be earlier than validFrom"),
        ("components.*.productId", "appears in another component; give it one quantity"),
    ],
    "PUT /v1/promotions/{id}/rule": [
        ("validUntil", "must not be earlier than validFrom"),
        ("components.*.productId", "appears in another component; give it one quantity"),
    ],
    "PUT /v1/coupons/{code}": [("validUntil", "must not be earlier than validFrom")],
    "POST /v1/fiscal/archives": [
        ("to", "must not be before from"),
        ("to", "must not be after today *"),
        ("to", "must be less than a year after from"),
    ],
    "GET /v1/exports/fec": [
        ("to", "must not be before from"),
        ("to", "must not be after today *"),
        ("to", "must be less than a year after from"),
    ],
    "GET /v1/exports/e-reporting": [
        ("to", "must not be before from"),
        ("to", "must not be after today *"),
        ("to", "must be less than a year after from"),
    ],
    "PUT /v1/staff/{subject}": [
        ("pin", "is required for a new staff member"),
        *[("subject", message) for message in _NEW_ID],
    ],
    "PUT /v1/stores/{storeId}": [
        *[("storeId", message) for message in _NEW_ID],
        # Check digits and keys, and the rules between the seller's fields and the country.
        ("siren", "fails its check digit"),
        ("vatNumber", "has a key that does not match its SIREN"),
        ("vatNumber", "must be FR, a key of 2 capital letters or digits, then a SIREN of 9 digits"),
        ("vatNumber", "is not the VAT number of the SIREN given"),
        ("siret", "does not start with the SIREN given"),
        ("address.postalCode", "must be a French postal code of 5 digits"),
    ],
    "POST /v1/register-sessions/{sessionId}/close": [("counted.*.method", "is counted twice")],
    "GET /v1/sales": [("to", "must be later than from"), *_CURSORS],
    "GET /v1/reports/sales": [
        ("from", "must be before *"),
        ("from", "must be at most 366 days before *"),
        ("to", "must be after from"),
        ("to", "must be at most 366 days after from"),
        ("to", "must be at least 24 hours after the earliest accepted instant"),
    ],
    "POST /v1/webhooks/{id}/replay": [("after", "is past the feed's last event (cursor *)")],
    "POST /v1/webhooks": [("url", "leads to *; webhooks go to public addresses only")],
    # A search needs a word; which characters are letters or digits, the document's regular
    # expressions (without Unicode classes) cannot say.
    "GET /v1/catalog/skus": [("q", "must hold a word: a letter or a digit"), *_CURSORS],
    "GET /v1/customers": [("q", "must hold a word: a letter or a digit"), *_CURSORS],
    "GET /v1/stores": _CURSORS,
    "GET /v1/payments": _CURSORS,
    # A card number in any free text of an outcome: a run of twelve digits or more, however
    # spaced, which a JSON Schema pattern could only say with a look-ahead no tool reads alike.
    "POST /v1/payments/{paymentId}/outcome": [
        (field, "must not hold a card number: at most its last four digits")
        for field in ("authorizationCode", "cardBrand", "entryMode", "terminalTransactionId", "terminalReceipt")
    ],
    "POST /v1/payments": [
        (field, "must not hold a card number: at most its last four digits") for field in ("terminalId", "provider")
    ],
    "GET /v1/staff": _CURSORS,
    "GET /v1/coupons": _CURSORS,
    "GET /v1/register-sessions": _CURSORS,
    "GET /v1/stores/{storeId}/stock/{skuId}/movements": _CURSORS,
    "POST /v1/stores/{storeId}/stock-counts": [("lines.*.skuId", "appears more than once in the count")],
    "POST /v1/stock-transfers": [
        ("lines.*.skuId", "appears more than once in the transfer"),
        ("toStoreId", "must be another store than fromStoreId"),
    ],
    "POST /v1/stock-transfers/{transferId}/receive": [
        ("lines.*.skuId", "appears more than once in the receipt"),
    ],
    # A ticket named once; the buyer's check digits, keys and postal code, as for a store.
    "POST /v1/invoices": [
        ("transactionIds.*", "is named twice"),
        ("buyer.siren", "fails its check digit"),
        ("buyer.vatNumber", "has a key that does not match its SIREN"),
        ("buyer.vatNumber", "must be FR, a key of 2 capital letters or digits, then a SIREN of 9 digits"),
        ("buyer.vatNumber", "is not the VAT number of the SIREN given"),
        ("buyer.address.postalCode", "must be a French postal code of 5 digits"),
    ],
    "GET /v1/invoices": [("to", "must not be before from"), *_CURSORS],
}

# Refusals that depend on the data held: (status, code) per operation.
_ON_THE_DATA = {
    "POST /v1/checkout/finalize": {(422, "BUSINESS_RULE_VIOLATION")},
    # A session that is not open; an approval's amount that does not fit its attempt.
    "POST /v1/payments": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "POST /v1/payments/{paymentId}/outcome": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "POST /v1/payments/{paymentId}/void": {(422, "BUSINESS_RULE_VIOLATION")},
    "POST /v1/checkout/price": {(422, "BUSINESS_RULE_VIOLATION")},
    "POST /v1/returns": {(422, "BUSINESS_RULE_VIOLATION")},
    # No mail server, or a sale without a consenting customer; a send id of another sale.
    "POST /v1/sales/{transactionId}/receipt/send": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "POST /v1/register-sessions": {(422, "BUSINESS_RULE_VIOLATION")},
    "POST /v1/elevation-grants": {
        (422, "BUSINESS_RULE_VIOLATION"),
        (422, "NO_ELEVATION_REQUIRED"),
        (422, "ELEVATION_UNAVAILABLE"),
    },
    "PUT /v1/coupons/{code}": {(422, "BUSINESS_RULE_VIOLATION")},
    "POST /v1/fiscal/archives": {(422, "BUSINESS_RULE_VIOLATION")},
    # A period holding a day its register has not closed yet.
    "GET /v1/exports/fec": {(422, "BUSINESS_RULE_VIOLATION")},
    "GET /v1/exports/e-reporting": {(422, "BUSINESS_RULE_VIOLATION")},
    # An unknown store or sale, a seller identity not complete; a ticket on an invoice already,
    # an invoice id used for another request.
    "POST /v1/invoices": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "PUT /v1/promotions/{id}/rule": {(412, "PRECONDITION_FAILED")},
    "POST /v1/gift-cards": {(409, "CONFLICT")},
    "POST /v1/register-sessions/{sessionId}/cash-movements": {
        (422, "BUSINESS_RULE_VIOLATION"),
        (409, "CONFLICT"),
    },
    "GET /v1/register-sessions/{sessionId}/x-report": {(422, "BUSINESS_RULE_VIOLATION")},
    "PUT /v1/catalog/skus/{skuId}": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "POST /v1/catalog/import": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "PUT /v1/stores/{storeId}/prices/{skuId}": {(422, "BUSINESS_RULE_VIOLATION")},
    "POST /v1/stores/{storeId}/stock-counts": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "POST /v1/stock-transfers": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
    "POST /v1/stock-transfers/{transferId}/receive": {(422, "BUSINESS_RULE_VIOLATION"), (409, "CONFLICT")},
}


def _error(response):
    try:
        return response.json()["error"]
    except Exception:
        return None


def _is_rule_the_schema_cannot_state(operation: str, response) -> bool:
    error = _error(response)
    if error is None:
        return False
    if (response.status_code, error.get("code")) in _ON_THE_DATA.get(operation, set()):
        return True
    allowed = _BETWEEN_FIELDS.get(operation)
    if response.status_code != 400 or not allowed or error.get("code") != "VALIDATION_FAILED":
        return False
    problems = error.get("fieldErrors") or []
    return bool(problems) and all(
        any(
            fnmatch.fnmatchcase(p["field"], field) and fnmatch.fnmatchcase(p["message"], message)
            for field, message in allowed
        )
        for p in problems
    )


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every finding but a schema-valid request refused for a rule listed above."""
    if "positive_data_acceptance" not in getattr(failure, "checks", ()):
        return True
    return not _is_rule_the_schema_cannot_state(case.operation.label, response)
