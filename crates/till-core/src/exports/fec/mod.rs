//! The FEC (article A47 A-1 of the Livre des procédures fiscales): one sales entry per
//! register's closed day, crediting sales per VAT rate and the VAT collected, debiting what each
//! tender method took; returns on the opposite side. Every amount column is non-negative, every
//! entry balances to the cent, entries are numbered from 1 without gaps in chronological order.

use super::{ClosedDay, ExportError};
use crate::money::VatRate;
use crate::sale::TenderMethod;
use jiff::civil::Date;
use std::collections::BTreeMap;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

mod checker;
pub use checker::{Checked, check, parse_amount};

/// The 18 columns, in the order the article fixes.
pub const COLUMNS: [&str; 18] = [
    "JournalCode",
    "JournalLib",
    "EcritureNum",
    "EcritureDate",
    "CompteNum",
    "CompteLib",
    "CompAuxNum",
    "CompAuxLib",
    "PieceRef",
    "PieceDate",
    "EcritureLib",
    "Debit",
    "Credit",
    "EcritureLet",
    "DateLet",
    "ValidDate",
    "Montantdevise",
    "Idevise",
];

/// Which account each part of a day goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FecAccounts {
    pub journal_code: String,
    pub journal_label: String,
    /// Sales, net of VAT (707 Ventes de marchandises).
    pub sales: String,
    /// VAT collected (44571 TVA collectée).
    pub vat: String,
    /// Per tender method.
    pub tenders: BTreeMap<String, String>,
    /// Tender methods the map does not name (471 Compte d'attente, for the accountant to
    /// reclassify).
    pub other_tenders: String,
    /// What a tender gave over the amount due and the shop kept (7588 Produits divers de
    /// gestion courante).
    pub forfeited: String,
    /// The label (`CompteLib`) of each account, by its number. An account the map does not
    /// name takes the label of the first part that goes to it (see [`FecAccounts::label`]).
    pub labels: BTreeMap<String, String>,
}

/// The French chart of accounts' names of the default accounts.
const DEFAULT_LABELS: [(&str, &str); 10] = [
    ("707", "Ventes de marchandises"),
    ("44571", "TVA collectée"),
    ("530", "Caisse"),
    ("5112", "Cartes bancaires à encaisser"),
    ("511", "Valeurs à l'encaissement"),
    ("5116", "Titres-restaurant à encaisser"),
    ("4191", "Clients - avances et acomptes reçus"),
    ("411", "Clients"),
    ("471", "Compte d'attente"),
    ("7588", "Produits divers de gestion courante"),
];

/// What a tender method is called in French, in the lines' labels.
fn method_words(method: &str) -> &str {
    match TenderMethod::parse(method) {
        Some(TenderMethod::Cash) => "espèces",
        Some(TenderMethod::Card) => "carte bancaire",
        Some(TenderMethod::Cheque) => "chèque",
        Some(TenderMethod::MealVoucher) => "titre-restaurant",
        Some(TenderMethod::GiftCard) => "carte cadeau",
        Some(TenderMethod::CreditNote) => "avoir",
        Some(TenderMethod::Loyalty) => "points de fidélité",
        Some(TenderMethod::Installment) => "paiement différé",
        None => method,
    }
}

/// The label of an account by the part that goes to it, for an account the configuration
/// moved a part to without naming it.
fn part_label(part: &str) -> &'static str {
    match part {
        "sales" => "Ventes de marchandises",
        "vat" => "TVA collectée",
        "cash" => "Caisse",
        "card" => "Cartes bancaires à encaisser",
        "cheque" => "Chèques à encaisser",
        "meal_voucher" => "Titres-restaurant à encaisser",
        "gift_card" | "credit_note" | "loyalty" => "Clients - avances et acomptes reçus",
        "installment" => "Clients",
        "forfeited" => "Produits divers de gestion courante",
        _ => "Compte d'attente",
    }
}

impl Default for FecAccounts {
    fn default() -> Self {
        let tenders = [
            ("cash", "530"),
            ("card", "5112"),
            ("cheque", "511"),
            ("meal_voucher", "5116"),
            // Gift cards and credit notes are prepaid: their use settles a debt to the customer
            // (4191 Clients, avances et acomptes reçus), it brings no money in.
            ("gift_card", "4191"),
            ("credit_note", "4191"),
            ("loyalty", "4191"),
            ("installment", "411"),
        ];
        FecAccounts {
            journal_code: "VE".to_owned(),
            journal_label: "Ventes".to_owned(),
            sales: "707".to_owned(),
            vat: "44571".to_owned(),
            tenders: tenders
                .into_iter()
                .map(|(method, account)| (method.to_owned(), account.to_owned()))
                .collect(),
            other_tenders: "471".to_owned(),
            forfeited: "7588".to_owned(),
            labels: DEFAULT_LABELS
                .into_iter()
                .map(|(account, label)| (account.to_owned(), label.to_owned()))
                .collect(),
        }
    }
}

/// Why an account or a journal code cannot be written in a FEC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadAccount {
    /// The setting's name, as `sales` or `tender card`.
    pub setting: String,
    pub reason: &'static str,
}

impl FecAccounts {
    /// The account of a tender method.
    pub fn tender(&self, method: &str) -> &str {
        self.tenders.get(method).unwrap_or(&self.other_tenders)
    }

    /// The one label of `account`: the one `labels` gives it, else that of the first part
    /// going to it (sales, VAT, the tender methods in alphabetical order, other methods, what
    /// was kept over the amount due), so that every line of an account carries the same label.
    pub fn label(&self, account: &str) -> &str {
        if let Some(label) = self.labels.get(account) {
            return label;
        }
        let parts = [("sales", &self.sales), ("vat", &self.vat)]
            .into_iter()
            .chain(self.tenders.iter().map(|(method, account)| (method.as_str(), account)))
            .chain([("other", &self.other_tenders), ("forfeited", &self.forfeited)]);
        parts
            .into_iter()
            .find(|(_, to)| to.as_str() == account)
            .map_or("Compte d'attente", |(part, _)| part_label(part))
    }

    /// Refuses an account that is empty, longer than an account number or holds anything but
    /// letters and digits (a tab or a line break would break the file's columns).
    pub fn check(&self) -> Result<(), BadAccount> {
        let mut named: Vec<(String, &str, usize)> = vec![
            ("journal_code".to_owned(), &self.journal_code, 10),
            ("sales_account".to_owned(), &self.sales, 20),
            ("vat_account".to_owned(), &self.vat, 20),
            ("other_tender_account".to_owned(), &self.other_tenders, 20),
            ("forfeited_account".to_owned(), &self.forfeited, 20),
        ];
        named.extend(
            self.tenders
                .iter()
                .map(|(method, account)| (format!("tender_accounts {method}"), account.as_str(), 20)),
        );
        for (setting, value, longest) in named {
            let reason = if value.is_empty() {
                Some("must not be empty")
            } else if value.len() > longest {
                Some("is too long")
            } else if !value.bytes().all(|b| b.is_ascii_alphanumeric()) {
                Some("must be letters and digits only")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(BadAccount { setting, reason });
            }
        }
        if !fits_a_column(&self.journal_label) {
            return Err(BadAccount {
                setting: "journal_label".to_owned(),
                reason: "must be 1 to 60 characters without tabs or line breaks",
            });
        }
        for (account, label) in &self.labels {
            if !fits_a_column(label) {
                return Err(BadAccount {
                    setting: format!("account_labels {account}"),
                    reason: "must be 1 to 60 characters without tabs or line breaks",
                });
            }
        }
        Ok(())
    }
}

/// A label of 1 to 60 characters, not blank, with nothing that would break a line or a column.
fn fits_a_column(label: &str) -> bool {
    !label.trim().is_empty()
        && label.chars().count() <= 60
        && !label
            .chars()
            .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FecLine {
    pub entry_number: u64,
    pub entry_date: Date,
    pub account: String,
    pub account_label: String,
    pub piece_ref: String,
    pub label: String,
    pub debit_cents: i64,
    pub credit_cents: i64,
    pub valid_date: Date,
}

/// The entries of a period, ready to be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fec {
    pub journal_code: String,
    pub journal_label: String,
    pub lines: Vec<FecLine>,
}

/// A line of an entry before it is numbered: which account, what the line is, and a signed
/// amount (positive on the side the part normally sits, negative on the other).
struct Part {
    account: String,
    /// What the line holds, as `Ventes TVA 20%`: a sales or VAT line ends with its rate.
    detail: String,
    /// True for a part that sits on the credit side when positive.
    credit: bool,
    cents: i64,
}

/// The entries of `days`, one per register's day, in chronological order (day, then register,
/// then closure), numbered from 1.
pub fn fec(days: &[ClosedDay], accounts: &FecAccounts) -> Result<Fec, ExportError> {
    let mut ordered: Vec<&ClosedDay> = days.iter().collect();
    ordered.sort_by(|a, b| (a.date, &a.register_id, a.closure_seq).cmp(&(b.date, &b.register_id, b.closure_seq)));
    let mut lines = Vec::new();
    let mut number = 0u64;
    for day in ordered {
        day.ensure_as_sealed()?;
        let parts = parts(day, accounts)?;
        if parts.iter().all(|part| part.cents == 0) {
            continue;
        }
        number += 1;
        let entry = entry(day, number, parts, accounts)?;
        lines.extend(entry);
    }
    Ok(Fec {
        journal_code: accounts.journal_code.clone(),
        journal_label: accounts.journal_label.clone(),
        lines,
    })
}

fn rate_label(rate: i64) -> String {
    VatRate::from_hundredths(rate).map_or_else(|| format!("{rate}/100 %"), |rate| rate.to_string())
}

/// The parts of a day's entry: sales and VAT per rate (highest first), then tenders per method.
fn parts(day: &ClosedDay, accounts: &FecAccounts) -> Result<Vec<Part>, ExportError> {
    let overflow = || day.overflow();
    let mut parts = Vec::new();
    for (rate, figures) in day.tickets.rates.iter().rev() {
        let label = rate_label(*rate);
        for (side, what) in [(figures.sales, "Ventes"), (figures.returns, "Retours")] {
            parts.push(Part {
                account: accounts.sales.clone(),
                detail: format!("{what} TVA {label}"),
                credit: true,
                cents: side.net_cents().map_err(|_| overflow())?,
            });
        }
        for (side, what) in [(figures.sales, "TVA collectée"), (figures.returns, "TVA sur retours")] {
            parts.push(Part {
                account: accounts.vat.clone(),
                detail: format!("{what} {label}"),
                credit: true,
                cents: side.vat_cents,
            });
        }
    }
    let mut forfeited = 0i64;
    for (method, figures) in &day.tickets.tenders {
        let words = method_words(method);
        for (cents, what) in [
            (figures.received_cents, "Encaissements"),
            (figures.refunded_cents, "Remboursements"),
        ] {
            parts.push(Part {
                account: accounts.tender(method).to_owned(),
                detail: format!("{what} {words}"),
                credit: false,
                cents,
            });
        }
        forfeited = forfeited.checked_add(figures.forfeited_cents).ok_or_else(overflow)?;
    }
    parts.push(Part {
        account: accounts.forfeited.clone(),
        detail: "Trop-perçus conservés".to_owned(),
        credit: true,
        cents: forfeited,
    });
    Ok(parts)
}

/// The lines of one entry, zero parts left out, refused unless it balances.
fn entry(day: &ClosedDay, number: u64, parts: Vec<Part>, accounts: &FecAccounts) -> Result<Vec<FecLine>, ExportError> {
    let (mut debit, mut credit) = (0i64, 0i64);
    let mut lines = Vec::new();
    for part in parts.into_iter().filter(|part| part.cents != 0) {
        let amount = part.cents.checked_abs().ok_or_else(|| day.overflow())?;
        // A negative part sits on the other side, so that every amount column is positive.
        let on_credit = part.credit == (part.cents > 0);
        let (d, c) = if on_credit { (0, amount) } else { (amount, 0) };
        debit = debit.checked_add(d).ok_or_else(|| day.overflow())?;
        credit = credit.checked_add(c).ok_or_else(|| day.overflow())?;
        lines.push(FecLine {
            entry_number: number,
            entry_date: day.date,
            account_label: accounts.label(&part.account).to_owned(),
            account: part.account,
            piece_ref: format!("Z-{}-{}", day.register_id, day.closure_seq),
            label: format!("Caisse {} du {}: {}", day.register_id, day.date, part.detail),
            debit_cents: d,
            credit_cents: c,
            valid_date: day.closed_on.max(day.date),
        });
    }
    if debit != credit {
        return Err(ExportError::Unbalanced {
            register_id: day.register_id.clone(),
            date: day.date,
            debit_cents: debit,
            credit_cents: credit,
        });
    }
    Ok(lines)
}

/// The file's name by the FEC naming rule: the SIREN, `FEC`, the closing date. The SIREN is
/// the first 9 digits of the SIRET of the stores exported, when every one has one and they
/// agree; else it is left out.
pub fn file_name<'a>(sirets: impl IntoIterator<Item = Option<&'a str>>, closing: Date) -> String {
    let sirens: std::collections::BTreeSet<Option<&str>> =
        sirets.into_iter().map(|siret| siret.and_then(|s| s.get(..9))).collect();
    let siren = match sirens.into_iter().collect::<Vec<_>>()[..] {
        [Some(siren)] => siren,
        _ => "",
    };
    format!("{siren}FEC{}.txt", fec_date(closing))
}

/// `YYYYMMDD`.
pub fn fec_date(date: Date) -> String {
    date.strftime("%Y%m%d").to_string()
}

/// Cents with a decimal comma and no thousands separator: `1234,50`.
pub fn fec_amount(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let magnitude = cents.unsigned_abs();
    format!("{sign}{},{:02}", magnitude / 100, magnitude % 100)
}

/// Text that goes in a column, in plain ASCII: accents are dropped and ligatures spelled out
/// (`é` is `e`, `œ` is `oe`), control characters and every kind of space or line separator
/// (a tab or a line break would split the line) are a space, and any other character outside
/// printable ASCII is a `?`.
pub fn column(text: &str) -> String {
    let mut ascii = String::with_capacity(text.len());
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        match c {
            ' '..='~' => ascii.push(c),
            'œ' => ascii.push_str("oe"),
            'Œ' => ascii.push_str("OE"),
            'æ' => ascii.push_str("ae"),
            'Æ' => ascii.push_str("AE"),
            'ß' => ascii.push_str("ss"),
            c if c.is_control() || c.is_whitespace() => ascii.push(' '),
            _ => ascii.push('?'),
        }
    }
    ascii
}

impl Fec {
    /// The file: a header line with the column names, then a line per entry line, fields
    /// separated by tabs, lines ended by CR LF.
    pub fn render(&self) -> String {
        let mut text = COLUMNS.join("\t");
        text.push_str("\r\n");
        for line in &self.lines {
            let fields = [
                column(&self.journal_code),
                column(&self.journal_label),
                line.entry_number.to_string(),
                fec_date(line.entry_date),
                column(&line.account),
                column(&line.account_label),
                String::new(),
                String::new(),
                column(&line.piece_ref),
                fec_date(line.entry_date),
                column(&line.label),
                fec_amount(line.debit_cents),
                fec_amount(line.credit_cents),
                String::new(),
                String::new(),
                fec_date(line.valid_date),
                String::new(),
                String::new(),
            ];
            text.push_str(&fields.join("\t"));
            text.push_str("\r\n");
        }
        text
    }

    /// How many entries the file holds.
    pub fn entries(&self) -> usize {
        self.lines.last().map_or(0, |line| line.entry_number as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::day;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_day_credits_sales_and_vat_per_rate_and_debits_each_tender() {
        let days = [day(
            "2026-03-31",
            &[
                (2000, 1450, 242, "card"),
                (550, 260, 14, "cash"),
                (2000, -1450, -242, "card"),
            ],
        )];
        let fec = fec(&days, &FecAccounts::default()).unwrap();
        let text = fec.render();
        let checked = check(&text).expect("a valid file");
        assert_eq!(checked.entries, 1);
        let rows: Vec<(&str, i64, i64)> = fec
            .lines
            .iter()
            .map(|l| (l.account.as_str(), l.debit_cents, l.credit_cents))
            .collect();
        assert_eq!(
            rows,
            [
                ("707", 0, 1208),
                ("707", 1208, 0),
                ("44571", 0, 242),
                ("44571", 242, 0),
                ("707", 0, 246),
                ("44571", 0, 14),
                ("5112", 1450, 0),
                ("5112", 0, 1450),
                ("530", 260, 0),
            ]
        );
        assert!(text.starts_with("JournalCode\tJournalLib\tEcritureNum\t"));
        assert!(text.contains(
            "VE\tVentes\t1\t20260331\t707\tVentes de marchandises\t\t\tZ-r1-1\t20260331\t\
             Caisse r1 du 2026-03-31: Ventes TVA 20%\t"
        ));
        assert!(text.contains("\t0,00\t12,08\t\t\t20260401\t\t\r\n"));
    }

    #[test]
    fn a_day_whose_tenders_do_not_pay_its_sales_is_refused() {
        let mut unpaid = day("2026-03-31", &[(2000, 1200, 200, "card")]);
        unpaid.tickets.tenders.get_mut("card").unwrap().received_cents = 1199;
        assert!(matches!(
            fec(&[unpaid], &FecAccounts::default()),
            Err(ExportError::Unbalanced {
                debit_cents: 1199,
                credit_cents: 1200,
                ..
            })
        ));
    }

    #[test]
    fn amounts_and_dates_are_written_as_the_format_requires() {
        assert_eq!(fec_amount(0), "0,00");
        assert_eq!(fec_amount(5), "0,05");
        assert_eq!(fec_amount(123_456_789), "1234567,89");
        assert_eq!(parse_amount("1234567,89"), Some(123_456_789));
        for bad in ["1.234,56", "12,5", "-1,00", "1 234,00", "12", ",50"] {
            assert_eq!(parse_amount(bad), None, "{bad}");
        }
        assert_eq!(fec_date("2026-03-01".parse().unwrap()), "20260301");
        let closing = "2026-12-31".parse().unwrap();
        let siret = Some("12345678900012");
        assert_eq!(file_name([siret, siret], closing), "123456789FEC20261231.txt");
        assert_eq!(file_name([siret, None], closing), "FEC20261231.txt");
        assert_eq!(file_name([siret, Some("98765432100012")], closing), "FEC20261231.txt");
    }

    #[test]
    fn the_checker_finds_what_the_administrations_tool_refuses() {
        let days = [
            day("2026-03-30", &[(2000, 1200, 200, "cash")]),
            day("2026-03-31", &[(550, 211, 11, "card")]),
        ];
        let good = fec(&days, &FecAccounts::default()).unwrap().render();
        assert_eq!(check(&good).unwrap().entries, 2);
        let cases = [
            (good.replacen("JournalLib\t", "JournalLabel\t", 1), "header"),
            (good.replacen("\t12,00\t", "\t12.00\t", 1), "not an amount"),
            (
                good.replacen("\t12,00\t0,00\t", "\t12,01\t0,00\t", 1),
                "does not balance",
            ),
            (good.replacen("\t2\t20260331", "\t3\t20260331", 1), "without gaps"),
            (good.replacen("20260330\t", "2026-03-30\t", 1), "YYYYMMDD"),
            (good.replacen("\t2\t20260331\t", "\t2\t20260329\t", 1), "back in time"),
            (good.replacen("\tVentes\t", "\tVentes\tx\t", 1), "fields"),
        ];
        for (bad, why) in cases {
            let defect = check(&bad).expect_err(why);
            assert!(defect.contains(why), "{why}: {defect}");
        }
    }

    #[test]
    fn the_default_mapping_is_writable_and_a_bad_account_is_named() {
        assert_eq!(FecAccounts::default().check(), Ok(()));
        let mut bad = FecAccounts::default();
        bad.tenders.insert("card".into(), "51\t12".into());
        assert_eq!(bad.check().unwrap_err().setting, "tender_accounts card");
    }

    #[test]
    fn every_line_of_an_account_carries_its_one_french_label() {
        let days = [day(
            "2026-03-31",
            &[
                (2000, 1450, 242, "card"),
                (550, 260, 14, "cash"),
                (2000, -1450, -242, "credit_note"),
                (550, 300, 16, "gift_card"),
                (550, 100, 5, "loyalty"),
            ],
        )];
        let fec = fec(&days, &FecAccounts::default()).unwrap();
        let mut labels: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        for line in &fec.lines {
            labels.entry(&line.account).or_default().insert(&line.account_label);
        }
        let labels: Vec<(&str, Vec<&str>)> = labels
            .into_iter()
            .map(|(account, set)| (account, set.into_iter().collect()))
            .collect();
        assert_eq!(
            labels,
            [
                ("4191", vec!["Clients - avances et acomptes reçus"]),
                ("44571", vec!["TVA collectée"]),
                ("5112", vec!["Cartes bancaires à encaisser"]),
                ("530", vec!["Caisse"]),
                ("707", vec!["Ventes de marchandises"]),
            ]
        );
        let text = fec.render();
        assert!(text.is_ascii(), "{text}");
        for detail in [
            "Encaissements carte bancaire",
            "Encaissements especes",
            "Remboursements avoir",
            "Encaissements carte cadeau",
            "Encaissements points de fidelite",
            "TVA collectee 5.5%",
            "Clients - avances et acomptes recus",
        ] {
            assert!(text.contains(detail), "{detail}: {text}");
        }
        assert!(!text.contains("credit_note") && !text.contains(" card"), "{text}");
    }

    #[test]
    fn an_account_moved_without_a_label_takes_its_parts_and_a_label_set_wins() {
        let mut accounts = FecAccounts::default();
        accounts.tenders.insert("card".into(), "5115".into());
        accounts.tenders.insert("meal_voucher".into(), "5115".into());
        assert_eq!(accounts.label("5115"), "Cartes bancaires à encaisser");
        accounts.labels.insert("5115".into(), "CB et titres".into());
        assert_eq!(accounts.label("5115"), "CB et titres");
        assert_eq!(accounts.check(), Ok(()));
        accounts.labels.insert("530".into(), "Caisse\u{2028}centrale".into());
        assert_eq!(accounts.check().unwrap_err().setting, "account_labels 530");
    }

    #[test]
    fn columns_are_plain_ascii_without_separators() {
        assert_eq!(column("Caisse Élysée n°2"), "Caisse Elysee n?2");
        assert_eq!(column("Œuf\tà\u{2028}la\u{2029}coque\r\n"), "OEuf a la coque  ");
        assert_eq!(column("caisse-東京\u{202e}"), "caisse-???");
        let mut closed = day("2026-03-31", &[(2000, 1200, 200, "cash")]);
        closed.register_id = "Tŕ\u{2028}1".into();
        let text = fec(&[closed], &FecAccounts::default()).unwrap().render();
        assert!(text.is_ascii(), "{text:?}");
        assert!(text.contains("\tZ-Tr 1-1\t"), "{text:?}");
        assert_eq!(check(&text).map(|c| c.entries), Ok(1));
    }

    fn ticket() -> impl Strategy<Value = (i64, i64, i64, &'static str)> {
        (
            prop::sample::select(vec![2000i64, 1000, 550, 210, 0]),
            -50_000i64..200_000,
            prop::sample::select(vec!["cash", "card", "gift_card", "mystery"]),
        )
            .prop_map(|(rate, total, method)| (rate, total, total * rate / (10_000 + rate), method))
    }

    proptest! {
        #[test]
        fn every_entry_balances_and_numbering_has_no_gap(
            days in prop::collection::vec((0u8..28, 0u8..3, prop::collection::vec(ticket(), 0..12)), 0..10)
        ) {
            let days: Vec<ClosedDay> = days
                .iter()
                .map(|(d, register, tickets)| {
                    let mut closed = day(&format!("2026-02-{:02}", d + 1), tickets);
                    closed.register_id = format!("r{register}");
                    closed
                })
                .collect();
            let fec = fec(&days, &FecAccounts::default()).unwrap();
            let checked = check(&fec.render()).map_err(TestCaseError::fail)?;
            prop_assert_eq!(checked.entries, fec.entries());
            prop_assert_eq!(checked.debit_cents, checked.credit_cents);
            let mut numbers: Vec<u64> = fec.lines.iter().map(|l| l.entry_number).collect();
            numbers.dedup();
            prop_assert_eq!(numbers, (1..=fec.entries() as u64).collect::<Vec<_>>());
            for line in &fec.lines {
                prop_assert!(line.debit_cents >= 0 && line.credit_cents >= 0);
                prop_assert!((line.debit_cents == 0) != (line.credit_cents == 0));
            }
            let sales_net: i64 = days.iter().flat_map(|d| d.sealed_vat.iter()).map(|v| v.total_cents - v.vat_cents).sum();
            let on_707: i64 = fec.lines.iter().filter(|l| l.account == "707").map(|l| l.credit_cents - l.debit_cents).sum();
            prop_assert_eq!(on_707, sales_net);
        }
    }
}
