//! The invoice as a Factur-X PDF (docs/invoices.md, "The PDF"): a PDF/A-3b document a person
//! reads (seller and buyer with their SIREN and VAT numbers, number and dates, the tickets
//! covered, the lines, the VAT per rate, the totals, the payment terms and the mentions the XML
//! carries) with the CII XML embedded as `factur-x.xml`, its relationship `Alternative`.
//!
//! It is drawn from the invoice as kept, its answer and its XML, with dates taken from the
//! invoice, so every copy of an invoice is the same file. The text is French, as the invoice's
//! XML, in DejaVu Sans Mono (embedded, its licence beside it in `fonts/`): a monospaced face
//! lays the columns out by characters.
//!
//! Its XMP metadata also carries Factur-X's properties (`factur_x`), which krilla cannot write.

mod factur_x;

use krilla::configure::{Archival, ConfigurationBuilder};
use krilla::embed::{AssociationKind, EmbeddedFile, MimeType};
use krilla::geom::Point;
use krilla::metadata::{DateTime, Metadata};
use krilla::page::PageSettings;
use krilla::text::{Font, TextDirection};
use krilla::{Document, SerializeSettings};
use till_core::invoice::InvoiceAnswer;
use till_core::invoice::cii::VOUCHER_EXEMPTION;
use till_core::invoice::issue::{InvoiceKindWord, InvoiceLineAnswer, PartyAnswer};

const REGULAR: &[u8] = include_bytes!("fonts/DejaVuSansMono.ttf");
const BOLD: &[u8] = include_bytes!("fonts/DejaVuSansMono-Bold.ttf");

/// The name Factur-X gives the embedded XML.
pub const XML_NAME: &str = "factur-x.xml";

/// A4, in points.
const PAGE_WIDTH: f32 = 595.28;
const PAGE_HEIGHT: f32 = 841.89;
const MARGIN: f32 = 42.0;
const FONT_SIZE: f32 = 8.5;
const LINE_HEIGHT: f32 = 11.5;
/// Characters on a line: DejaVu Sans Mono's advance is 0.602 em.
const COLUMNS: usize = 98;

/// Why no PDF was made: a font the renderer ships could not be read, or the PDF library refused
/// the document (it checks PDF/A-3b as it writes).
#[derive(Debug, thiserror::Error)]
#[error("the invoice's PDF could not be made: {0}")]
pub struct PdfError(String);

/// One line of the page, bold or not.
struct Line {
    bold: bool,
    text: String,
}

fn line(text: impl Into<String>) -> Line {
    Line {
        bold: false,
        text: text.into(),
    }
}

fn heading(text: impl Into<String>) -> Line {
    Line {
        bold: true,
        text: text.into(),
    }
}

/// The Factur-X PDF of `invoice` with `xml`, its CII XML, embedded.
pub fn render(invoice: &InvoiceAnswer, xml: &[u8]) -> Result<Vec<u8>, PdfError> {
    let regular = Font::new(REGULAR.into(), 0).ok_or_else(|| PdfError("its font".to_owned()))?;
    let bold = Font::new(BOLD.into(), 0).ok_or_else(|| PdfError("its bold font".to_owned()))?;
    let configuration = ConfigurationBuilder::new()
        .with_archival_validator(Archival::A3_B)
        .finish()
        .map_err(|e| PdfError(format!("{e:?}")))?;
    let mut document = Document::new_with(SerializeSettings {
        configuration,
        ..SerializeSettings::default()
    });
    let issued = issue_instant(invoice);
    document.set_metadata(
        Metadata::new()
            .title(format!("{} {}", title(invoice), invoice.number))
            .authors(vec![invoice.seller.name.clone()])
            .language("fr".to_owned())
            .creator("till".to_owned())
            .document_id(invoice.number.clone())
            .creation_date(issued),
    );
    let embedded = EmbeddedFile {
        path: XML_NAME.to_owned(),
        mime_type: MimeType::new("text/xml"),
        description: Some("Factur-X (EN 16931) CII XML".to_owned()),
        association_kind: AssociationKind::Alternative,
        data: xml.to_vec().into(),
        modification_date: Some(issued),
        compress: Some(false),
        location: None,
    };
    document
        .embed_file(embedded)
        .ok_or_else(|| PdfError("the XML is embedded twice".to_owned()))?;
    let lines = lines(invoice);
    let per_page = ((PAGE_HEIGHT - 2.0 * MARGIN) / LINE_HEIGHT) as usize - 2;
    let pages: Vec<&[Line]> = lines.chunks(per_page.max(1)).collect();
    let count = pages.len();
    for (index, page_lines) in pages.into_iter().enumerate() {
        let settings = PageSettings::from_wh(PAGE_WIDTH, PAGE_HEIGHT).ok_or_else(|| PdfError("A4".to_owned()))?;
        let mut page = document.start_page_with(settings);
        let mut surface = page.surface();
        let mut y = MARGIN + FONT_SIZE;
        for printed in page_lines {
            if !printed.text.is_empty() {
                let font = if printed.bold { bold.clone() } else { regular.clone() };
                surface.draw_text(
                    Point::from_xy(MARGIN, y),
                    font,
                    FONT_SIZE,
                    &printed.text,
                    false,
                    TextDirection::Auto,
                );
            }
            y += LINE_HEIGHT;
        }
        let footer = format!("{} · page {}/{}", invoice.number, index + 1, count);
        surface.draw_text(
            Point::from_xy(MARGIN, PAGE_HEIGHT - MARGIN),
            regular.clone(),
            FONT_SIZE,
            &right(&footer, COLUMNS),
            false,
            TextDirection::Auto,
        );
        surface.finish();
        page.finish();
    }
    let pdf = document.finish().map_err(|e| PdfError(format!("{e:?}")))?;
    factur_x::declare(&pdf)
}

/// The issue instant, as the document's dates: read from the invoice, so that every copy is
/// the same file.
fn issue_instant(invoice: &InvoiceAnswer) -> DateTime {
    let at: jiff::Timestamp = invoice.issued_at.parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let utc = at.to_zoned(jiff::tz::TimeZone::UTC);
    let small = |n: i8| u8::try_from(n).unwrap_or(0);
    DateTime::new(u16::try_from(utc.year()).unwrap_or(1970))
        .month(small(utc.month()))
        .day(small(utc.day()))
        .hour(small(utc.hour()))
        .minute(small(utc.minute()))
        .second(small(utc.second()))
        .utc_offset_hour(0)
        .utc_offset_minute(0)
}

fn title(invoice: &InvoiceAnswer) -> &'static str {
    match invoice.kind {
        InvoiceKindWord::Invoice => "Facture",
        InvoiceKindWord::Credit => "Avoir",
    }
}

/// Everything the pages print, line by line.
fn lines(invoice: &InvoiceAnswer) -> Vec<Line> {
    let mut out = Vec::new();
    let kind = match invoice.kind {
        InvoiceKindWord::Invoice => "FACTURE",
        InvoiceKindWord::Credit => "FACTURE D'AVOIR",
    };
    out.push(heading(spread(kind, &format!("N° {}", invoice.number), COLUMNS)));
    out.push(line(format!("Date d'émission : {}", french_date(&invoice.issued_on))));
    if let Some(credited) = &invoice.credits {
        out.push(line(format!(
            "Avoir sur la facture {} du {}",
            credited.number,
            french_date(&credited.issued_on)
        )));
    }
    out.push(line(""));
    let half = COLUMNS / 2;
    let seller = party(&invoice.seller);
    let buyer = party(&invoice.buyer);
    out.push(heading(format!("{:<half$}{}", "VENDEUR", "ACHETEUR")));
    for row in 0..seller.len().max(buyer.len()) {
        let left = seller.get(row).map(String::as_str).unwrap_or_default();
        let right_side = buyer.get(row).map(String::as_str).unwrap_or_default();
        out.push(line(format!("{:<half$}{}", cut(left, half - 2), cut(right_side, half))));
    }
    out.push(line(""));
    out.push(heading("Tickets de caisse couverts"));
    for ticket in &invoice.tickets {
        out.extend(wrapped(
            &format!(
                "{} du {} (caisse {}, transaction {})",
                ticket.number,
                french_date(&ticket.sold_on),
                ticket.register_id,
                ticket.transaction_id
            ),
            COLUMNS,
        ));
    }
    out.push(line(""));
    out.push(heading(format!(
        "{:<38}{:>6}{:>11}{:>8}{:>11}{:>12}{:>12}",
        "Désignation", "Qté", "PU TTC", "TVA", "Brut HT", "Remise HT", "Net HT"
    )));
    for item in &invoice.lines {
        out.extend(invoice_line(item));
    }
    out.push(line(""));
    out.push(heading(format!("{:<12}{:>14}{:>14}", "Taux TVA", "Base HT", "TVA")));
    for rate in &invoice.vat {
        let percent = format!("{} %", rate.vat_rate);
        out.push(line(format!(
            "{:<12}{:>14}{:>14}",
            percent,
            euros(rate.taxable_cents),
            euros(rate.vat_cents)
        )));
        if rate.category == "E" {
            out.extend(wrapped(&format!("  {VOUCHER_EXEMPTION}"), COLUMNS));
        }
    }
    out.push(line(""));
    let totals = &invoice.totals;
    let (paid, left) = match invoice.kind {
        InvoiceKindWord::Invoice => ("Payé en caisse", "Reste à payer"),
        InvoiceKindWord::Credit => ("Remboursé en caisse", "Reste à rembourser"),
    };
    for (label, cents, strong) in [
        ("Total HT", totals.without_vat_cents, false),
        ("TVA", totals.vat_cents, false),
        ("Total TTC", totals.with_vat_cents, true),
        (paid, totals.paid_cents, false),
        (left, totals.due_cents, false),
    ] {
        let text = right(&format!("{label:<22}{:>14} €", euros(cents)), COLUMNS);
        out.push(if strong { heading(text) } else { line(text) });
    }
    out.push(line(""));
    out.push(heading("Conditions de paiement"));
    out.extend(wrapped(&invoice.payment_terms, COLUMNS));
    out.push(line(""));
    out.push(heading("Mentions"));
    for note in &invoice.notes {
        out.extend(wrapped(note, COLUMNS));
    }
    out.push(line(""));
    out.extend(wrapped(
        &format!(
            "Facture électronique Factur-X (EN 16931) : le fichier {XML_NAME} joint fait foi. \
             Scellée au journal de la caisse {} (événement {}).",
            invoice.fiscal.register_id, invoice.fiscal.seq
        ),
        COLUMNS,
    ));
    out
}

/// A party's block: name, address, SIREN and VAT number.
fn party(party: &PartyAnswer) -> Vec<String> {
    let address = &party.address;
    let mut rows = vec![party.name.clone(), address.line1.clone()];
    rows.extend(address.line2.clone());
    rows.push(format!("{} {}", address.postal_code, address.city));
    rows.push(address.country.clone());
    if let Some(siren) = &party.siren {
        rows.push(format!("SIREN {siren}"));
    }
    if let Some(vat) = &party.vat_number {
        rows.push(format!("TVA intracommunautaire {vat}"));
    }
    rows
}

/// A line of the table: its name wrapped in its column, its figures on the first row.
fn invoice_line(item: &InvoiceLineAnswer) -> Vec<Line> {
    const NAME: usize = 37;
    let mut names = wrap(&item.name, NAME).into_iter();
    let first = names.next().unwrap_or_default();
    let percent = format!("{} %", item.vat_rate);
    let mut rows = vec![line(format!(
        "{:<38}{:>6}{:>11}{:>8}{:>11}{:>12}{:>12}",
        first,
        item.quantity,
        euros(item.unit_price_cents),
        percent,
        euros(item.gross_cents),
        euros(item.allowance_cents),
        euros(item.net_cents)
    ))];
    rows.extend(names.map(line));
    rows
}

/// Cents as French invoices write euros: `1 234,50`, a minus before a negative amount.
pub fn euros(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let magnitude = cents.unsigned_abs();
    let units = (magnitude / 100).to_string();
    let mut grouped = String::new();
    for (index, digit) in units.chars().enumerate() {
        if index > 0 && (units.len() - index).is_multiple_of(3) {
            grouped.push('\u{202f}');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped},{:02}", magnitude % 100)
}

/// `2026-11-24` as `24/11/2026`.
fn french_date(iso: &str) -> String {
    match iso.parse::<jiff::civil::Date>() {
        Ok(date) => date.strftime("%d/%m/%Y").to_string(),
        Err(_) => iso.to_owned(),
    }
}

fn wrapped(text: &str, width: usize) -> Vec<Line> {
    wrap(text, width).into_iter().map(line).collect()
}

/// `text` in lines of at most `width` characters, broken at spaces where it can be.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let mut word = word.to_owned();
        while word.chars().count() > width {
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            if !current.is_empty() {
                rows.push(std::mem::take(&mut current));
            }
            rows.push(head);
        }
        let needed = current.chars().count() + usize::from(!current.is_empty()) + word.chars().count();
        if needed > width && !current.is_empty() {
            rows.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&word);
    }
    if !current.is_empty() || rows.is_empty() {
        rows.push(current);
    }
    rows
}

/// At most `width` characters of `text`.
fn cut(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

fn right(text: &str, width: usize) -> String {
    let length = text.chars().count();
    format!("{}{text}", " ".repeat(width.saturating_sub(length)))
}

fn spread(left: &str, right_side: &str, width: usize) -> String {
    let used = left.chars().count() + right_side.chars().count();
    format!("{left}{}{right_side}", " ".repeat(width.saturating_sub(used).max(1)))
}

#[cfg(test)]
mod tests;
