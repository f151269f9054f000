-- Closings that must let no ticket in while they run (a session's Z report, a period closed
-- early) take the ticket chain's head and give it back unchanged; each such hold now counts
-- here. A node that commits a sale in one statement, predicting the head from its own last
-- sale, checks this count with the sequence: a hold in between sends the sale down the
-- checked path, which sees what the closing wrote.
ALTER TABLE fiscal_heads ADD COLUMN holds BIGINT NOT NULL DEFAULT 0;

-- Ends a batch of writes that must all land: raises, and so undoes the whole statement, when
-- a required write changed no row. A batch sent outside a transaction has no other way back.
CREATE FUNCTION till_all_written(fewest BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN
    IF fewest = 0 THEN
        RAISE EXCEPTION 'a required write changed no row' USING ERRCODE = 'TL001';
    END IF;
    RETURN fewest;
END;
$$;
