//! The QR codes a receipt draws: encoded by fast_qr with medium error correction, which a
//! thermal print or a phone's camera reads, and drawn as an SVG for a page or a PNG image for
//! a mail (mail clients drop inline SVG). The printer draws its own from ESC/POS.

use fast_qr::{ECL, QRBuilder};
use std::fmt::Write;

/// Light modules around the code, as the standard asks.
const QUIET_ZONE: usize = 4;

/// Pixels per module in the drawings, enough for a camera to read a code off a screen.
const SCALE: usize = 4;

/// A QR code's modules, row by row.
pub struct Qr {
    /// Modules per side, without the quiet zone.
    size: usize,
    dark: Vec<bool>,
}

impl Qr {
    /// `text` as a QR code; `None` when it does not fit one (a proof or an address is a few
    /// hundred characters at most, far under what a code holds).
    pub fn encode(text: &str) -> Option<Qr> {
        let code = QRBuilder::new(text).ecl(ECL::M).build().ok()?;
        let size = code.size;
        let dark = code.data[..size * size].iter().map(|module| module.value()).collect();
        Some(Qr { size, dark })
    }

    fn is_dark(&self, x: usize, y: usize) -> bool {
        self.dark[y * self.size + x]
    }

    /// Modules per side, the quiet zone included.
    fn side(&self) -> usize {
        self.size + 2 * QUIET_ZONE
    }

    /// An SVG element to draw inline: one path of the dark runs of each row, on white, in
    /// pixels (a viewBox that scales modules up is drawn wrong by some readers).
    pub fn svg(&self) -> String {
        let side = self.side() * SCALE;
        let mut path = String::with_capacity(self.size * self.size);
        for y in 0..self.size {
            let mut x = 0;
            while x < self.size {
                if !self.is_dark(x, y) {
                    x += 1;
                    continue;
                }
                let run = (x..self.size).take_while(|&end| self.is_dark(end, y)).count();
                let (left, top) = ((x + QUIET_ZONE) * SCALE, (y + QUIET_ZONE) * SCALE);
                let _ = write!(path, "M{left} {top}H{}V{}H{left}z", left + run * SCALE, top + SCALE);
                x += run;
            }
        }
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {side} {side}\" width=\"{side}\" \
             height=\"{side}\" shape-rendering=\"crispEdges\"><rect width=\"{side}\" height=\"{side}\" \
             fill=\"#fff\"/><path fill=\"#000\" d=\"{path}\"/></svg>"
        )
    }

    /// A PNG image of one bit a pixel, black on white.
    pub fn png(&self) -> Vec<u8> {
        let side = self.side() * SCALE;
        let row_bytes = side.div_ceil(8);
        // A set bit is white in a one-bit grey image.
        let mut pixels = vec![0xFFu8; row_bytes * side];
        for y in 0..self.size {
            for x in 0..self.size {
                if self.is_dark(x, y) {
                    let (left, top) = ((x + QUIET_ZONE) * SCALE, (y + QUIET_ZONE) * SCALE);
                    for row in top..top + SCALE {
                        for column in left..left + SCALE {
                            pixels[row * row_bytes + column / 8] &= !(0x80 >> (column % 8));
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        let side = u32::try_from(side).unwrap_or(u32::MAX);
        let mut encoder = png::Encoder::new(&mut out, side, side);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::One);
        let written = encoder
            .write_header()
            .and_then(|mut writer| writer.write_image_data(&pixels));
        match written {
            Ok(()) => out,
            Err(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_drawn_with_its_quiet_zone_at_four_pixels_a_module() {
        let code = Qr::encode("TILL1:r1:1:100:2026-01-01T00:00:00Z:k:sig").expect("it fits");
        let side = (code.size + 8) * 4;
        assert!(code.svg().contains(&format!("width=\"{side}\" height=\"{side}\"")));
        // The finder pattern's top row starts at the quiet zone's edge.
        assert!(code.svg().contains("M16 16H44V20H16z"), "{}", code.svg());
        let png = code.png();
        assert_eq!(&png[1..4], b"PNG");
    }
}
