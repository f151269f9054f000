-- A sale's lines join its tenders, VAT and reductions in its detail document, so a sale writes
-- one row besides its stock and points. The units returned of its lines, which returns count up,
-- are kept in the sale's row as well: a JSON array in line order, NULL until the first return.
-- Sales written before keep their lines, and the units returned of them, in sale_lines.
ALTER TABLE sales ADD COLUMN returned_units TEXT;
