-- A sale's tenders, VAT breakdown and reductions as one JSON document in its own row, in the
-- layout of its sealed record: three tables fewer for every sale to write. Sales written
-- before keep theirs in sale_tenders, sale_vat and sale_adjustments, which till reads as well.
ALTER TABLE sales ADD COLUMN detail TEXT;
