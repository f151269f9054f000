-- The seller's identity a store prints on receipts and invoices (docs/receipts.md): its legal
-- name, the store's postal address, its SIREN and its VAT number. All optional: a store
-- provisioned before prints what it has.
ALTER TABLE stores ADD COLUMN legal_name TEXT;
ALTER TABLE stores ADD COLUMN address_line1 TEXT;
ALTER TABLE stores ADD COLUMN address_line2 TEXT;
ALTER TABLE stores ADD COLUMN postal_code TEXT;
ALTER TABLE stores ADD COLUMN city TEXT;
ALTER TABLE stores ADD COLUMN country TEXT;
ALTER TABLE stores ADD COLUMN siren TEXT;
ALTER TABLE stores ADD COLUMN vat_number TEXT;
