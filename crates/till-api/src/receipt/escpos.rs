//! The ticket as ESC/POS bytes for a thermal receipt printer: initialise, select code page
//! PC858 (Western European with the euro sign), the printer's lines with the total in bold,
//! the proof as a QR code drawn by the printer's own QR command (and the receipt's public page
//! as a second one, when it has one), then feed and cut.
//!
//! The commands come from the `escpos` crate; the text is encoded by `oem_cp`'s PC858 table,
//! a character the page lacks printed as `?`.

use super::{PrintedLines, Weight};
use escpos::driver::Driver;
use escpos::errors::{PrinterError, Result as PrinterResult};
use escpos::printer::Printer;
use escpos::utils::{JustifyMode, PageCode, Protocol, QRCodeCorrectionLevel, QRCodeModel, QRCodeOption};
use oem_cp::code_table::ENCODING_TABLE_CP858;
use std::cell::RefCell;
use std::rc::Rc;

/// The media type of ESC/POS bytes.
pub const MEDIA_TYPE: &str = "application/vnd.escpos";

/// The QR code's module size in dots: 5 makes a code of a few centimetres on a 203 dpi head.
const QR_MODULE_DOTS: u8 = 5;

/// Lines fed after the QR code so that the cut falls below it.
const FEED_BEFORE_CUT: u8 = 3;

/// Collects what the printer would be sent.
#[derive(Clone, Default)]
struct Bytes(Rc<RefCell<Vec<u8>>>);

impl Driver for Bytes {
    fn name(&self) -> String {
        "memory".to_owned()
    }

    fn write(&self, data: &[u8]) -> PrinterResult<()> {
        self.0.borrow_mut().extend_from_slice(data);
        Ok(())
    }

    fn read(&self, _buf: &mut [u8]) -> PrinterResult<usize> {
        Err(PrinterError::Io(
            "a receipt rendered to bytes answers nothing".to_owned(),
        ))
    }

    fn flush(&self) -> PrinterResult<()> {
        Ok(())
    }
}

/// The ESC/POS bytes printing `printed`.
pub fn bytes(printed: &PrintedLines) -> Vec<u8> {
    let sink = Bytes::default();
    // Only the driver above can fail, and it does not on writing.
    let _ = program(sink.clone(), printed);
    sink.0.take()
}

fn program(sink: Bytes, printed: &PrintedLines) -> PrinterResult<()> {
    let mut printer = Printer::new(sink, Protocol::default(), None);
    printer.init()?.page_code(PageCode::PC858)?;
    for (line, weight) in &printed.lines {
        let bold = *weight == Weight::Bold;
        if bold {
            printer.bold(true)?;
        }
        let mut encoded = oem_cp::encode_string_lossy(line, &ENCODING_TABLE_CP858);
        encoded.push(b'\n');
        printer.custom(&encoded)?;
        if bold {
            printer.bold(false)?;
        }
    }
    let qr = || QRCodeOption::new(QRCodeModel::Model2, QR_MODULE_DOTS, QRCodeCorrectionLevel::M);
    printer
        .justify(JustifyMode::CENTER)?
        .qrcode_option(&printed.proof, qr())?;
    if let Some(link) = &printed.link {
        printer.qrcode_option(link, qr())?;
    }
    printer
        .justify(JustifyMode::LEFT)?
        .feeds(FEED_BEFORE_CUT)?
        .print_cut()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(lines: &[(&str, Weight)]) -> PrintedLines {
        PrintedLines {
            lines: lines.iter().map(|(l, w)| ((*l).to_owned(), *w)).collect(),
            proof: "TILL1:r1:7:1450:20261128101500:k1:c2ln".to_owned(),
            link: None,
        }
    }

    #[test]
    fn a_ticket_is_initialised_set_to_pc858_drawn_with_the_printers_qr_command_and_cut() {
        let bytes = bytes(&printed(&[
            ("Café crème", Weight::Regular),
            ("TOTAL TTC 2,50 €", Weight::Bold),
        ]));
        let proof = b"TILL1:r1:7:1450:20261128101500:k1:c2ln";
        let mut expected: Vec<u8> = vec![0x1b, b'@', 0x1b, b't', 19];
        // é is 0x82 and è 0x8a in code page 858, the euro sign 0xd5.
        expected.extend(b"Caf\x82 cr\x8ame\n");
        expected.extend(b"\x1bE\x01TOTAL TTC 2,50 \xd5\n\x1bE\x00");
        expected.extend(b"\x1ba\x01");
        expected.extend([0x1d, b'(', b'k', 4, 0, 49, 65, 50, 0]); // model 2
        expected.extend([0x1d, b'(', b'k', 3, 0, 49, 67, 5]); // module of 5 dots
        expected.extend([0x1d, b'(', b'k', 3, 0, 49, 69, 49]); // correction M
        let stored = u16::try_from(proof.len() + 3).unwrap().to_le_bytes();
        expected.extend([0x1d, b'(', b'k', stored[0], stored[1], 49, 80, 48]);
        expected.extend(proof);
        expected.extend([0x1d, b'(', b'k', 3, 0, 49, 81, 48]); // print the symbol
        expected.extend(b"\x1ba\x00\x1bd\x03\x1dVA\x00");
        assert_eq!(bytes, expected);
    }

    #[test]
    fn a_character_the_code_page_lacks_prints_as_a_question_mark() {
        let bytes = bytes(&printed(&[("Thé 茶", Weight::Regular)]));
        assert!(bytes.windows(6).any(|w| w == b"Th\x82 ?\n"));
    }
}
