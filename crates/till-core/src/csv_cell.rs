//! The cells of the CSV files till writes, as a spreadsheet opens them.

use std::borrow::Cow;

/// A text cell as it goes into a CSV file. A spreadsheet reads a cell starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return as a formula, so such a cell is written after a single
/// quote (`'=HYPERLINK(...)`), which the spreadsheet shows as text. Numbers till writes are not
/// text cells and go as they are: `-1450` is read as the number it is, and a quote would make
/// it text that no sum adds.
pub fn text_cell(text: &str) -> Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_a_spreadsheet_would_compute_is_written_as_text() {
        for formula in ["=1+1", "+33 1", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(text_cell(formula), format!("'{formula}"));
        }
        for plain in ["camille", "2026-03-30", "5.5", "", " =1", "'=1", "a=b"] {
            assert_eq!(text_cell(plain), plain);
        }
    }
}
