-- The customer directory (docs/customers.md): a customer's personal fields, the words of
-- their name for the search, their groups and the history of their consent. Every row here is
-- deleted when the customer is erased; `customers` keeps the bare id, its points ledger and
-- the instant of the erasure. Nothing here is ever sealed in the fiscal journal.
ALTER TABLE customers ADD COLUMN erased_at INTEGER;

CREATE TABLE customer_profiles (
    customer_id             TEXT PRIMARY KEY,
    display_name            TEXT,
    email                   TEXT,
    phone                   TEXT,
    postal_code             TEXT,
    birth_date              TEXT,
    notes                   TEXT,
    marketing_email         INTEGER NOT NULL,
    marketing_sms           INTEGER NOT NULL,
    e_receipt               INTEGER NOT NULL,
    -- Bumped by every write: two writes of one profile at once keep one of them whole.
    version                 INTEGER NOT NULL,
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL
);

CREATE INDEX customer_profiles_by_email ON customer_profiles (email, customer_id) WHERE email IS NOT NULL;
CREATE INDEX customer_profiles_by_phone ON customer_profiles (phone, customer_id) WHERE phone IS NOT NULL;

-- Each folded word of a display name, with all of that name's words beside it (sorted, each
-- between spaces), as the catalog search keeps an article's.
CREATE TABLE customer_words (
    word            TEXT NOT NULL,
    customer_id     TEXT NOT NULL,
    words           TEXT NOT NULL,
    PRIMARY KEY (word, customer_id)
);

CREATE INDEX customer_words_by_customer ON customer_words (customer_id);

CREATE TABLE customer_groups (
    group_name      TEXT NOT NULL,
    customer_id     TEXT NOT NULL,
    PRIMARY KEY (group_name, customer_id)
);

CREATE INDEX customer_groups_by_customer ON customer_groups (customer_id);

-- Every change of a consent flag: the flag, its new value, when and where it was made.
CREATE TABLE customer_consents (
    change_id       INTEGER PRIMARY KEY,
    customer_id     TEXT NOT NULL,
    flag            TEXT NOT NULL,
    granted         INTEGER NOT NULL,
    source          TEXT NOT NULL,
    at              INTEGER NOT NULL
);

CREATE INDEX customer_consents_by_customer ON customer_consents (customer_id, change_id);

-- The retention job's scan: profiles not erased, by their last activity.
CREATE INDEX customers_by_activity ON customers (updated_at, customer_id) WHERE erased_at IS NULL;

-- Which node runs the retention job, and until when: one node at a time.
CREATE TABLE customer_retention_lease (
    singleton       INTEGER PRIMARY KEY,
    holder          TEXT NOT NULL,
    held_until      INTEGER NOT NULL
);
