//! The ticket: lines of text for a receipt printer (48 or 42 columns), the same as ESC/POS bytes
//! ([`escpos`]), or in HTML. French, as the NF525 journal it comes from: the seller, lines,
//! promotions and discounts, VAT breakdown, tenders, change, the ticket's sequence, a signature
//! extract, the software version and the proof of the ticket (a QR code where the format can
//! draw one, its text otherwise). A print after the first says DUPLICATA with its number; a
//! receipt shown, not printed, says so and lists the prints made.

pub mod escpos;
pub mod qr;

use jiff::tz::TimeZone;
use qr::Qr;
use till_app::receipts::{Print, ProvenReceipt, PublicReceipt, Receipt, Verdict};
use till_core::fiscal::payload::SaleRecord;
use till_core::fiscal::proof::ProofError;
use till_core::instant::from_micros;
use till_core::seller::CountryCode;
use till_core::stored_value::InstrumentKind;
use till_core::stored_value::credit_note_number;

/// Width of a receipt printer's line: 48 characters on 80 mm paper in the printer's first
/// font, 42 on printers whose font or paper holds fewer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Columns {
    #[default]
    Wide,
    Narrow,
}

impl Columns {
    pub fn count(self) -> usize {
        match self {
            Columns::Wide => 48,
            Columns::Narrow => 42,
        }
    }

    /// `48` or `42`.
    pub fn parse(text: &str) -> Option<Columns> {
        match text {
            "48" => Some(Columns::Wide),
            "42" => Some(Columns::Narrow),
            _ => None,
        }
    }
}

/// How a printed line stands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    Regular,
    /// The total: bold where the printer can.
    Bold,
}

/// The ticket as a printer's lines, before the proof: each at most the width it was laid
/// out for.
pub struct PrintedLines {
    pub lines: Vec<(String, Weight)>,
    /// What the QR code encodes.
    pub proof: String,
    /// The receipt's public page, a second QR code.
    pub link: Option<String>,
}

/// What the receipt is rendered for.
#[derive(Clone, Copy, Debug)]
pub enum Rendering<'a> {
    /// A print: the original, or a DUPLICATA with its number.
    Print(&'a Print),
    /// Shown on a screen or read by a program: no print, so it says it is not a ticket and
    /// lists the prints made.
    Shown,
    /// Sent by e-mail: the ticket in its dematerialised form, which seals nothing.
    Mailed,
}

/// What a receipt says, ready to lay out.
struct Layout {
    header: Vec<String>,
    lines: Vec<(String, String)>,
    total: String,
    vat: Vec<[String; 4]>,
    tenders: Vec<(String, String)>,
    footer: Vec<String>,
    /// A receipt shown: how many prints were made, then each with when.
    prints: Vec<(String, String)>,
    proof: String,
    link: Option<String>,
}

/// `1234` → `12,34`
fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{},{:02}", abs / 100, abs % 100)
}

fn rate(hundredths: i64) -> String {
    format!("{},{:02} %", hundredths / 100, hundredths % 100)
}

fn method(name: &str) -> &str {
    match name {
        "card" => "Carte bancaire",
        "cash" => "Espèces",
        "cheque" => "Chèque",
        "meal_voucher" => "Titre-restaurant",
        "gift_card" => "Carte cadeau",
        "credit_note" => "Avoir",
        "loyalty" => "Points fidélité",
        "installment" => "Paiement fractionné",
        other => other,
    }
}

/// Characters 3, 7, 13 and 19 of the signature, as certified products print them.
pub fn signature_extract(signature: &str) -> String {
    let chars: Vec<char> = signature.chars().collect();
    [3, 7, 13, 19].iter().filter_map(|n| chars.get(n - 1)).collect()
}

/// What the list of a shown receipt says of one print, and when it was made.
fn print_line(print: &Print, zone: &TimeZone) -> (String, String) {
    let what = match print.duplicata() {
        None => "original".to_owned(),
        Some(number) => format!("DUPLICATA n° {number}"),
    };
    let when = print.printed_at.to_zoned(zone.clone()).strftime("%d/%m/%Y %H:%M");
    (format!("Impression {} : {what}", print.print_no), when.to_string())
}

fn layout(proven: &ProvenReceipt, rendering: Rendering<'_>) -> Layout {
    let receipt: &Receipt = &proven.receipt;
    let sale: &SaleRecord = &receipt.sale;
    let zone = receipt
        .store
        .as_ref()
        .map_or(TimeZone::UTC, |s| s.profile.timezone.zone());
    let when = from_micros(sale.emitted_at)
        .to_zoned(zone.clone())
        .strftime("%d/%m/%Y %H:%M")
        .to_string();
    let mut header = Vec::new();
    let mut prints = Vec::new();
    match rendering {
        Rendering::Print(print) => {
            if let Some(number) = print.duplicata() {
                header.push(format!("*** DUPLICATA n° {number} ***"));
            }
        }
        Rendering::Shown => {
            header.push("CONSULTATION - NE VAUT PAS TICKET".to_owned());
            let count = match receipt.prints.len() {
                0 => "Jamais imprimé".to_owned(),
                n => format!("Imprimé {n} fois"),
            };
            prints.push((count, String::new()));
            prints.extend(receipt.prints.iter().map(|print| print_line(print, &zone)));
        }
        Rendering::Mailed => header.push("TICKET DÉMATÉRIALISÉ".to_owned()),
    }
    match &receipt.store {
        Some(store) => {
            let seller = &store.profile.seller;
            header.push(store.profile.name.clone());
            // The seller as French law asks a receipt to name it: company, address, SIRET, VAT.
            header.extend(seller.legal_name.as_ref().map(|name| name.as_str().to_owned()));
            if let Some(address) = &seller.address {
                header.push(address.line1.as_str().to_owned());
                header.extend(address.line2.as_ref().map(|line| line.as_str().to_owned()));
                header.push(format!("{} {}", address.postal_code, address.city));
                if address.country.as_str() != CountryCode::FRANCE {
                    header.push(address.country.as_str().to_owned());
                }
            }
            if let Some(siret) = &store.profile.siret {
                header.push(format!("SIRET {}", siret.as_str()));
            }
            if let Some(vat) = &seller.vat_number {
                header.push(format!("TVA {vat}"));
            }
        }
        None => header.push(format!("Magasin {}", sale.store_id)),
    }
    header.push(format!("Ticket {} du {when}", sale.number));
    header.push(format!(
        "Caisse {} - {}",
        sale.register_id,
        receipt.seller_name.as_deref().unwrap_or(&sale.seller_id)
    ));
    if sale.kind == "return" {
        header.push(format!("AVOIR {}", credit_note_number(&sale.register_id, receipt.seq)));
        if let Some(original) = &sale.original {
            header.push(format!(
                "Retour du ticket {} (caisse {}, n° {})",
                original.transaction_id, original.register_id, original.seq
            ));
        }
    } else if sale.kind != "sale" {
        header.push(format!("Type : {}", sale.kind.to_uppercase()));
    }
    let letters: Vec<i64> = {
        let mut rates: Vec<i64> = sale.vat.iter().map(|v| v.vat_rate).collect();
        rates.sort_by_key(|r| std::cmp::Reverse(*r));
        rates
    };
    let letter = |rate: i64| {
        letters
            .iter()
            .position(|r| *r == rate)
            .map_or('?', |i| (b'A' + i as u8) as char)
            .to_string()
    };
    let mut lines = Vec::new();
    for line in &sale.lines {
        lines.push((
            line.label.clone().unwrap_or_else(|| "Article divers".to_owned()),
            String::new(),
        ));
        lines.push((
            format!("   {} x {}", line.quantity, money(line.unit_price_cents)),
            format!("{} {}", money(line.gross_cents), letter(line.vat_rate)),
        ));
        // A return refunds what was paid: the original's reductions, prorated, line by line.
        let reduction = line.net_cents - line.gross_cents;
        if sale.original.is_some() && reduction != 0 {
            lines.push(("   Remises du ticket d'origine".to_owned(), money(reduction)));
        }
    }
    for adjustment in &sale.adjustments {
        let what = match adjustment.source.as_str() {
            "promotion" => adjustment
                .label
                .clone()
                .unwrap_or_else(|| format!("Promotion {}", adjustment.source_id)),
            "coupon" => format!("Coupon {}", adjustment.source_id),
            _ => format!("Remise {}", adjustment.source_id),
        };
        lines.push((what, money(-adjustment.amount_cents)));
    }
    let mut vat: Vec<[String; 4]> = vec![["TVA".into(), "HT".into(), "TVA".into(), "TTC".into()]];
    for rate_hundredths in &letters {
        if let Some(v) = sale.vat.iter().find(|v| v.vat_rate == *rate_hundredths) {
            vat.push([
                format!("{} {}", letter(v.vat_rate), rate(v.vat_rate)),
                money(v.total_cents - v.vat_cents),
                money(v.vat_cents),
                money(v.total_cents),
            ]);
        }
    }
    let mut tenders: Vec<(String, String)> = Vec::with_capacity(sale.tenders.len());
    for (tender, instrument) in sale.tenders.iter().zip(&receipt.instruments) {
        match instrument {
            Some(held) => {
                let named = match held.kind {
                    InstrumentKind::GiftCard => format!("{} ****{}", method(&tender.method), held.label),
                    InstrumentKind::CreditNote => format!("{} {}", method(&tender.method), held.label),
                };
                tenders.push((named, money(tender.applied_cents)));
                tenders.push(("  Solde restant".to_owned(), money(held.balance_after)));
                // The credit note a return issues is spent with this code, never its number.
                if let Some(code) = &held.code {
                    tenders.push(("  Code de l'avoir".to_owned(), code.clone()));
                }
            }
            None => tenders.push((method(&tender.method).to_owned(), money(tender.applied_cents))),
        }
    }
    if sale.change_cents != 0 {
        tenders.push(("Rendu".to_owned(), money(sale.change_cents)));
    }
    let footer = vec![
        format!("Ticket n° {} - caisse {}", receipt.seq, sale.register_id),
        format!("Signature {}", signature_extract(&receipt.signature)),
        format!("till {}", env!("CARGO_PKG_VERSION")),
    ];
    Layout {
        header,
        lines,
        total: money(sale.total_cents),
        vat,
        tenders,
        footer,
        prints,
        proof: proven.proof.clone(),
        link: proven.link.clone(),
    }
}

/// `left` and `right` on one line of `columns`, the left cut if both do not fit.
fn spread(left: &str, right: &str, columns: usize) -> String {
    let room = columns.saturating_sub(right.chars().count() + 1);
    let left: String = left.chars().take(room).collect();
    let gap = columns.saturating_sub(left.chars().count() + right.chars().count());
    format!("{left}{}{right}", " ".repeat(gap))
}

fn center(text: &str, columns: usize) -> String {
    let text: String = text.chars().take(columns).collect();
    let pad = (columns - text.chars().count()) / 2;
    format!("{}{text}", " ".repeat(pad)).trim_end().to_owned()
}

/// The VAT table's four columns in `columns`: the rate's column takes what the amounts leave.
fn vat_row([rate, net, vat, gross]: &[String; 4], columns: usize) -> String {
    let amount = (columns - 14) / 3;
    let last = columns - 14 - 2 * amount;
    format!("{rate:<14}{net:>amount$}{vat:>amount$}{gross:>last$}")
}

/// The ticket as a printer's lines of `columns` characters, the proof apart.
pub fn printed_lines(receipt: &ProvenReceipt, rendering: Rendering<'_>, columns: Columns) -> PrintedLines {
    let layout = layout(receipt, rendering);
    let width = columns.count();
    let regular = |line: String| (line, Weight::Regular);
    let rule = || regular("-".repeat(width));
    let mut out: Vec<(String, Weight)> = layout.header.iter().map(|h| regular(center(h, width))).collect();
    out.push(rule());
    out.extend(
        layout
            .lines
            .iter()
            .map(|(l, r)| regular(spread(l, r, width).trim_end().to_owned())),
    );
    out.push(rule());
    out.push((
        spread("TOTAL TTC", &format!("{} EUR", layout.total), width),
        Weight::Bold,
    ));
    out.push(rule());
    out.extend(layout.vat.iter().map(|row| regular(vat_row(row, width))));
    out.push(rule());
    out.extend(layout.tenders.iter().map(|(l, r)| regular(spread(l, r, width))));
    out.push(rule());
    out.extend(layout.footer.iter().map(|f| regular(center(f, width))));
    if !layout.prints.is_empty() {
        out.push(rule());
        out.extend(
            layout
                .prints
                .iter()
                .map(|(l, r)| regular(spread(l, r, width).trim_end().to_owned())),
        );
    }
    PrintedLines {
        lines: out,
        proof: layout.proof,
        link: layout.link,
    }
}

/// What a text receipt prints where a QR code cannot be drawn: the proof's text, cut to the
/// line's width, under its heading.
pub const PROOF_HEADING: &str = "Preuve du ticket :";

/// The heading of the receipt's public page's address on a text receipt.
pub const LINK_HEADING: &str = "Ticket en ligne :";

/// The ticket for a receipt printer as text: every line at most `columns` characters, the
/// proof's text at its end, then the address of the receipt's public page when it has one.
pub fn text(receipt: &ProvenReceipt, rendering: Rendering<'_>, columns: Columns) -> String {
    let PrintedLines { lines, proof, link } = printed_lines(receipt, rendering, columns);
    let mut out: Vec<String> = lines.into_iter().map(|(line, _)| line).collect();
    let mut cut = |heading: &str, text: &str| {
        out.push(heading.to_owned());
        let chars: Vec<char> = text.chars().collect();
        out.extend(
            chars
                .chunks(columns.count())
                .map(|chunk| chunk.iter().collect::<String>()),
        );
    };
    cut(PROOF_HEADING, &proof);
    if let Some(link) = &link {
        cut(LINK_HEADING, link);
    }
    out.join("\n") + "\n"
}

/// `text` as a QR code in SVG, to draw inline.
fn qr_svg(text: &str) -> String {
    Qr::encode(text).map_or_else(String::new, |code| code.svg())
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What a browser may do with the HTML ticket: show it with its own inline style, nothing
/// else. No script, nothing fetched from another address, no form, no base address to change.
/// Its text comes from a till, so the policy holds even if some of it were markup.
pub const HTML_POLICY: &str =
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'none'; base-uri 'none'";

/// The ticket as an HTML page, its proof as a QR code.
pub fn html(receipt: &ProvenReceipt, rendering: Rendering<'_>) -> String {
    page(receipt, rendering, None, Drawn::Inline)
}

/// The ticket as the HTML part of an e-mail: its proof's QR code is the image attached to the
/// mail under `proof_cid` ([`qr_png`]), which mail clients show where inline SVG is dropped.
pub fn mail_html(receipt: &ProvenReceipt, proof_cid: &str) -> String {
    page(receipt, Rendering::Mailed, None, Drawn::Attached(proof_cid))
}

/// How a page draws its QR codes.
#[derive(Clone, Copy)]
enum Drawn<'a> {
    /// In the page, as SVG.
    Inline,
    /// As the image attached under this content id; the public page's address as a link alone.
    Attached(&'a str),
}

/// `text` as a QR code in a PNG image.
pub fn qr_png(text: &str) -> Vec<u8> {
    Qr::encode(text).map_or_else(Vec::new, |code| code.png())
}

/// The receipt's public page: the receipt shown, under whether its proof verifies.
pub fn public_page(public: &PublicReceipt) -> String {
    let not_verified = |why: &str| format!("<p class=\"unverified\">Preuve NON vérifiée : {why}.</p>");
    let verdict = match &public.verdict {
        Verdict::Verified(ticket) => format!(
            "<p class=\"verified\">Preuve vérifiée : la caisse {} a scellé le ticket n° {} de {} EUR le {} (UTC), \
             avec une clé que publie ce service.</p>",
            escape(&ticket.register_id),
            ticket.ticket_seq,
            money(ticket.total_cents),
            ticket.issued_at.strftime("%d/%m/%Y %H:%M:%S"),
        ),
        Verdict::NotVerified(error) => not_verified(match error {
            ProofError::NotAProof => "elle est illisible",
            ProofError::UnknownKey(_) => "la clé qui l'a signée n'est pas publiée",
            ProofError::Forged => "sa signature ne correspond pas au ticket",
        }),
        Verdict::KeysUnreadable => not_verified("les clés publiées par ce service sont illisibles"),
    };
    page(&public.receipt, Rendering::Shown, Some(verdict), Drawn::Inline)
}

fn page(receipt: &ProvenReceipt, rendering: Rendering<'_>, verdict: Option<String>, drawn: Drawn<'_>) -> String {
    let layout = layout(receipt, rendering);
    let rows = |pairs: &[(String, String)]| {
        pairs
            .iter()
            .map(|(l, r)| format!("<tr><td>{}</td><td class=\"n\">{}</td></tr>", escape(l), escape(r)))
            .collect::<String>()
    };
    let vat: String = layout
        .vat
        .iter()
        .enumerate()
        .map(|(i, cells)| {
            let tag = if i == 0 { "th" } else { "td" };
            let cells: String = cells.iter().map(|c| format!("<{tag}>{}</{tag}>", escape(c))).collect();
            format!("<tr>{cells}</tr>")
        })
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"fr\"><head><meta charset=\"utf-8\"><title>Ticket</title>\
         <style>body{{font-family:monospace;max-width:28em}}td.n{{text-align:right}}table{{width:100%}}\
         figure{{margin:1em 0;text-align:center}}figure svg,figure img{{width:40mm;height:40mm}}\
         figcaption{{font-size:0.6em;word-break:break-all}}</style></head>\
         <body>{}<header>{}</header><table class=\"lines\">{}</table>\
         <p class=\"total\"><strong>TOTAL TTC {} EUR</strong></p><table class=\"vat\">{}</table>\
         <table class=\"tenders\">{}</table><footer>{}</footer>{}\
         <figure class=\"proof\">{}<figcaption>{}</figcaption></figure>{}</body></html>\n",
        verdict.unwrap_or_default(),
        layout
            .header
            .iter()
            .map(|h| format!("<p>{}</p>", escape(h)))
            .collect::<String>(),
        rows(&layout.lines),
        escape(&layout.total),
        vat,
        rows(&layout.tenders),
        layout
            .footer
            .iter()
            .map(|f| format!("<p>{}</p>", escape(f)))
            .collect::<String>(),
        if layout.prints.is_empty() {
            String::new()
        } else {
            format!("<table class=\"prints\">{}</table>", rows(&layout.prints))
        },
        match drawn {
            Drawn::Inline => qr_svg(&layout.proof),
            Drawn::Attached(cid) => format!("<img src=\"cid:{}\" alt=\"QR code de la preuve\">", escape(cid)),
        },
        escape(&layout.proof),
        layout.link.as_deref().map_or(String::new(), |link| format!(
            "<figure class=\"link\"><a href=\"{0}\">{1}</a><figcaption>Ticket en ligne : <a href=\"{0}\">{0}</a></figcaption></figure>",
            escape(link),
            match drawn {
                Drawn::Inline => qr_svg(link),
                Drawn::Attached(_) => String::new(),
            }
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_extract_takes_characters_3_7_13_and_19() {
        assert_eq!(signature_extract("abcdefghijklmnopqrstuvwxyz"), "cgms");
        assert_eq!(signature_extract("ab"), "");
    }

    #[test]
    fn lines_are_spread_within_48_columns() {
        let line = spread(&"x".repeat(60), "123,45 A", 48);
        assert_eq!(line.chars().count(), 48);
        assert!(line.ends_with(" 123,45 A"));
        assert_eq!(money(-130), "-1,30");
        assert_eq!(rate(550), "5,50 %");
    }
}
