//! Barcodes of the GS1 family an article can carry: EAN-8, UPC-A, EAN-13 and GTIN-14, each
//! ending with a check digit. A scanner reads the same article as a UPC-A or as the EAN-13
//! with a leading zero, so a barcode is kept as its GTIN-14 (zeros in front): one article per
//! GTIN, whichever form was written or scanned.

use std::fmt;

/// A barcode whose check digit holds, as its 14-digit GTIN.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gtin(String);

/// Why a text is not a barcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarcodeProblem {
    /// Not 8, 12, 13 or 14 digits.
    Shape,
    /// The last digit is not the check digit of the others.
    CheckDigit,
}

impl fmt::Display for BarcodeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BarcodeProblem::Shape => "must be an EAN-8, UPC-A, EAN-13 or GTIN-14: 8, 12, 13 or 14 digits",
            BarcodeProblem::CheckDigit => "has a wrong check digit",
        })
    }
}

/// A barcode as written on an article, with the GTIN it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Barcode {
    pub written: String,
    pub gtin: Gtin,
}

impl Barcode {
    pub fn parse(text: &str) -> Result<Barcode, BarcodeProblem> {
        Ok(Barcode {
            written: text.to_owned(),
            gtin: Gtin::parse(text)?,
        })
    }

    /// The barcode whose digits before the check digit are `body` (7, 11, 12 or 13 digits),
    /// its check digit computed: how a producer numbers its articles.
    pub fn completing(body: &str) -> Result<Barcode, BarcodeProblem> {
        if !matches!(body.len(), 7 | 11 | 12 | 13) || !body.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BarcodeProblem::Shape);
        }
        Barcode::parse(&format!("{body}{}", check_digit(body.as_bytes())))
    }
}

impl Gtin {
    /// The barcode `text` as its GTIN-14, if it is one of the four forms with its check digit.
    pub fn parse(text: &str) -> Result<Gtin, BarcodeProblem> {
        if !matches!(text.len(), 8 | 12 | 13 | 14) || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BarcodeProblem::Shape);
        }
        let digits = text.as_bytes();
        let (body, check) = digits.split_at(digits.len() - 1);
        if check_digit(body) != check[0] - b'0' {
            return Err(BarcodeProblem::CheckDigit);
        }
        Ok(Gtin(format!("{text:0>14}")))
    }

    /// The GTIN as stored: a barcode read from storage, already checked.
    pub fn from_trusted(gtin: String) -> Gtin {
        Gtin(gtin)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Gtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The GS1 check digit of `body` (the digits before it): from the right, weights 3 and 1 in
/// turn; the digit that brings the sum to a multiple of ten.
fn check_digit(body: &[u8]) -> u8 {
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, digit)| u32::from(digit - b'0') * if i % 2 == 0 { 3 } else { 1 })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn each_form_with_its_check_digit_is_a_gtin() {
        for (code, gtin) in [
            ("96385074", "00000096385074"),
            ("036000291452", "00036000291452"),
            ("4006381333931", "04006381333931"),
            ("10614141000415", "10614141000415"),
        ] {
            assert_eq!(Gtin::parse(code).map(|g| g.0), Ok(gtin.to_owned()), "{code}");
        }
    }

    #[test]
    fn a_completed_body_carries_its_check_digit() {
        let completed = Barcode::completing("400638133393").unwrap();
        assert_eq!(completed.written, "4006381333931");
        assert_eq!(Barcode::completing("12345"), Err(BarcodeProblem::Shape));
        assert_eq!(Barcode::completing("40063813339a"), Err(BarcodeProblem::Shape));
    }

    #[test]
    fn a_upc_a_and_its_ean_13_are_one_gtin() {
        assert_eq!(Gtin::parse("036000291452"), Gtin::parse("0036000291452"));
    }

    #[test]
    fn wrong_digits_and_shapes_are_refused() {
        assert_eq!(Gtin::parse("4006381333932"), Err(BarcodeProblem::CheckDigit));
        assert_eq!(Gtin::parse("96385075"), Err(BarcodeProblem::CheckDigit));
        for shape in [
            "",
            "1234567",
            "123456789",
            "40063813339a1",
            "+4006381333931",
            "4006381333931 ",
            "٤٠٠٦٣٨١٣٣٣٩٣١",
        ] {
            assert!(Gtin::parse(shape).is_err(), "{shape}");
        }
        assert_eq!(Gtin::parse("123456789012345"), Err(BarcodeProblem::Shape));
    }

    proptest! {
        /// Any body with its computed check digit parses, and changing any one digit of it
        /// breaks the check.
        #[test]
        fn one_changed_digit_is_always_caught(body in "[0-9]{12}", at in 0usize..13, by in 1u8..10) {
            let code = format!("{body}{}", check_digit(body.as_bytes()));
            prop_assert!(Gtin::parse(&code).is_ok());
            let mut changed = code.into_bytes();
            changed[at] = b'0' + (changed[at] - b'0' + by) % 10;
            prop_assert_eq!(Gtin::parse(std::str::from_utf8(&changed).unwrap()), Err(BarcodeProblem::CheckDigit));
        }
    }
}
