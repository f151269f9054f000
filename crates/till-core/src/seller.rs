//! The seller's identity that receipts and invoices print: its legal name, the store's postal
//! address, its SIREN and its VAT number. Each is parsed once, by the rules the French
//! registries publish, so a receipt never prints an identity an auditor would reject.

/// Why a field of the identity was refused; the API names the field and says this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdentityProblem {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {0} characters")]
    TooLong(usize),
    #[error("must not contain control characters")]
    ControlCharacter,
    #[error("must be exactly 9 digits")]
    NotNineDigits,
    /// The digits fail the Luhn check the registry's numbers pass: a digit was mistyped.
    #[error("fails its check digit")]
    CheckDigit,
    #[error("must be an ISO 3166-1 alpha-2 country code (FR, BE, ...)")]
    NotACountry,
    #[error("must be a French postal code of 5 digits")]
    NotAFrenchPostalCode,
    #[error("must be at most 10 letters, digits, spaces or dashes, with a letter or a digit")]
    PostalCodeForm,
    #[error("must be a country prefix of the EU VAT system followed by 2 to 13 capital letters or digits")]
    VatForm,
    #[error("must be FR, a key of 2 capital letters or digits, then a SIREN of 9 digits")]
    FrenchVatForm,
    /// A French number is `FR`, a two-digit key computed from the SIREN, then the SIREN.
    #[error("has a key that does not match its SIREN")]
    VatKey,
    /// The French VAT number names another company than the SIREN given with it.
    #[error("is not the VAT number of the SIREN given")]
    VatOfAnotherSiren,
    /// A SIRET is the SIREN of its company followed by the establishment's 5 digits.
    #[error("does not start with the SIREN given")]
    SiretOfAnotherSiren,
}

/// The rule of [`line`] as a schema pattern: no control character, not only white space.
pub const LINE_PATTERN: &str =
    "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// A text of one line: not only white space, at most `max` characters, no control character.
fn line(text: &str, max: usize) -> Result<String, IdentityProblem> {
    if text.trim().is_empty() {
        return Err(IdentityProblem::Empty);
    }
    if text.chars().count() > max {
        return Err(IdentityProblem::TooLong(max));
    }
    if text.chars().any(char::is_control) {
        return Err(IdentityProblem::ControlCharacter);
    }
    Ok(text.to_owned())
}

/// Whether `digits` (ASCII digits) pass the Luhn check: from the right, every second digit
/// doubled (less 9 past 9), the sum a multiple of ten.
fn luhn(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            match i % 2 {
                1 if d * 2 > 9 => d * 2 - 9,
                1 => d * 2,
                _ => d,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

parsed_text!(
    /// The company's registered name (raison sociale), as the registry writes it.
    LegalName
);
parsed_text!(
    /// A company's number in the French registry: 9 digits passing the Luhn check. A SIRET is
    /// a SIREN followed by an establishment's 5 digits.
    Siren
);
parsed_text!(
    /// A line of a postal address, or its city.
    AddressLine
);
parsed_text!(
    /// A postal code as the country writes it: 5 digits in France.
    PostalCode
);
parsed_text!(
    /// A country as ISO 3166-1 alpha-2 codes it.
    CountryCode
);
parsed_text!(
    /// An intra-community VAT number, upper case without spaces (`FR40303265045`).
    VatNumber
);

impl LegalName {
    pub const MAX_CHARS: usize = 200;

    pub fn parse(text: &str) -> Result<LegalName, IdentityProblem> {
        line(text, Self::MAX_CHARS).map(LegalName)
    }
}

impl Siren {
    pub fn parse(text: &str) -> Result<Siren, IdentityProblem> {
        if text.len() != 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(IdentityProblem::NotNineDigits);
        }
        if !luhn(text) {
            return Err(IdentityProblem::CheckDigit);
        }
        Ok(Siren(text.to_owned()))
    }

    /// The key of the French VAT number of this company.
    pub fn vat_key(&self) -> u64 {
        let number: u64 = self.0.parse().unwrap_or(0);
        (12 + 3 * (number % 97)) % 97
    }

    /// The French VAT number of this company.
    pub fn vat_number(&self) -> VatNumber {
        VatNumber(format!("FR{:02}{}", self.vat_key(), self.0))
    }
}

impl AddressLine {
    pub const MAX_CHARS: usize = 100;

    pub fn parse(text: &str) -> Result<AddressLine, IdentityProblem> {
        line(text, Self::MAX_CHARS).map(AddressLine)
    }
}

/// Every code ISO 3166-1 alpha-2 assigns.
const COUNTRIES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN \
    BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC \
    EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN \
    HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR \
    LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI \
    NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH \
    SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US \
    UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

impl CountryCode {
    pub const FRANCE: &'static str = "FR";

    /// Every code assigned, in order.
    pub fn assigned() -> impl Iterator<Item = &'static str> {
        COUNTRIES.split_whitespace()
    }

    pub fn parse(text: &str) -> Result<CountryCode, IdentityProblem> {
        let assigned = text.len() == 2 && Self::assigned().any(|code| code == text);
        assigned
            .then(|| CountryCode(text.to_owned()))
            .ok_or(IdentityProblem::NotACountry)
    }
}

impl PostalCode {
    pub const MAX_CHARS: usize = 10;

    /// A code of `country`: 5 digits in France, else up to 10 letters, digits, spaces and
    /// dashes, with at least one letter or digit.
    pub fn parse(text: &str, country: &CountryCode) -> Result<PostalCode, IdentityProblem> {
        if text.is_empty() {
            return Err(IdentityProblem::Empty);
        }
        if country.as_str() == CountryCode::FRANCE {
            return (text.len() == 5 && text.bytes().all(|b| b.is_ascii_digit()))
                .then(|| PostalCode(text.to_owned()))
                .ok_or(IdentityProblem::NotAFrenchPostalCode);
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || c == ' ' || c == '-';
        let some = text.chars().any(|c| c.is_ascii_alphanumeric());
        (text.chars().count() <= Self::MAX_CHARS && text.chars().all(allowed) && some)
            .then(|| PostalCode(text.to_owned()))
            .ok_or(IdentityProblem::PostalCodeForm)
    }
}

/// The prefixes of the EU's VAT system (Greece writes `EL`; `XI` is Northern Ireland).
pub const VAT_PREFIXES: &str = "AT BE BG CY CZ DE DK EE EL ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK XI";

impl VatNumber {
    /// As the registries write it: capital letters and digits, no separator. A French number
    /// must carry the key of its SIREN when the key is two digits (older numbers with a letter
    /// in the key are taken as written).
    pub fn parse(text: &str) -> Result<VatNumber, IdentityProblem> {
        if text.is_empty() {
            return Err(IdentityProblem::Empty);
        }
        let capitals_or_digits = |part: &str| part.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        let (Some(prefix), Some(rest)) = (text.get(..2), text.get(2..)) else {
            return Err(IdentityProblem::VatForm);
        };
        let known = VAT_PREFIXES.split_whitespace().any(|known| known == prefix);
        if !known || !(2..=13).contains(&rest.len()) || !capitals_or_digits(rest) {
            return Err(IdentityProblem::VatForm);
        }
        if prefix == CountryCode::FRANCE {
            if rest.len() != 11 {
                return Err(IdentityProblem::FrenchVatForm);
            }
            let (key, siren) = rest.split_at(2);
            let siren = Siren::parse(siren).map_err(|_| IdentityProblem::FrenchVatForm)?;
            if key.bytes().all(|b| b.is_ascii_digit()) && key.parse::<u64>().ok() != Some(siren.vat_key()) {
                return Err(IdentityProblem::VatKey);
            }
        }
        Ok(VatNumber(text.to_owned()))
    }

    /// The SIREN a French number is made of.
    pub fn french_siren(&self) -> Option<&str> {
        self.0.strip_prefix("FR").and_then(|rest| rest.get(2..))
    }
}

/// A store's postal address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostalAddress {
    pub line1: AddressLine,
    pub line2: Option<AddressLine>,
    pub postal_code: PostalCode,
    pub city: AddressLine,
    pub country: CountryCode,
}

/// The identity a receipt or an invoice prints for the seller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SellerIdentity {
    pub legal_name: Option<LegalName>,
    pub address: Option<PostalAddress>,
    pub siren: Option<Siren>,
    pub vat_number: Option<VatNumber>,
}

impl SellerIdentity {
    /// Refuses a French VAT number that is not the one of the SIREN given with it
    /// ([`IdentityProblem::VatOfAnotherSiren`]), and an establishment's SIRET that is not of
    /// that SIREN ([`IdentityProblem::SiretOfAnotherSiren`]).
    pub fn checked(self, siret: Option<&str>) -> Result<SellerIdentity, IdentityProblem> {
        let Some(siren) = &self.siren else {
            return Ok(self);
        };
        if let Some(vat) = &self.vat_number
            && vat.french_siren().is_some_and(|of| of != siren.as_str())
        {
            return Err(IdentityProblem::VatOfAnotherSiren);
        }
        if siret.is_some_and(|siret| !siret.starts_with(siren.as_str())) {
            return Err(IdentityProblem::SiretOfAnotherSiren);
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_siren_is_nine_digits_passing_the_luhn_check() {
        assert_eq!(Siren::parse("303265045").unwrap().as_str(), "303265045");
        assert_eq!(Siren::parse("303 265 045"), Err(IdentityProblem::NotNineDigits));
        assert_eq!(Siren::parse("303265046"), Err(IdentityProblem::CheckDigit));
        assert_eq!(Siren::parse("30326504"), Err(IdentityProblem::NotNineDigits));
        assert_eq!(Siren::parse("30326504A"), Err(IdentityProblem::NotNineDigits));
        assert_eq!(Siren::parse("３03265045"), Err(IdentityProblem::NotNineDigits));
    }

    #[test]
    fn a_french_vat_number_carries_the_key_of_its_siren() {
        let siren = Siren::parse("303265045").unwrap();
        assert_eq!(siren.vat_number().as_str(), "FR40303265045");
        let vat = VatNumber::parse("FR40303265045").unwrap();
        assert_eq!(vat.french_siren(), Some("303265045"));
        assert_eq!(VatNumber::parse("fr40303265045"), Err(IdentityProblem::VatForm));
        assert_eq!(VatNumber::parse("FR 40 303 265 045"), Err(IdentityProblem::VatForm));
        assert_eq!(VatNumber::parse("FR41303265045"), Err(IdentityProblem::VatKey));
        assert_eq!(VatNumber::parse("FR40303265046"), Err(IdentityProblem::FrenchVatForm));
        assert_eq!(VatNumber::parse("FR4030326504"), Err(IdentityProblem::FrenchVatForm));
        assert!(
            VatNumber::parse("FRXY303265045").is_ok(),
            "a key with letters is taken as written"
        );
        assert!(VatNumber::parse("DE123456789").is_ok());
        assert_eq!(VatNumber::parse("aé1234"), Err(IdentityProblem::VatForm));
        assert_eq!(VatNumber::parse("US123456789"), Err(IdentityProblem::VatForm));
        assert_eq!(VatNumber::parse(""), Err(IdentityProblem::Empty));
    }

    #[test]
    fn the_vat_number_must_be_the_one_of_the_siren_given() {
        let identity = |siren: &str, vat: &str| SellerIdentity {
            legal_name: None,
            address: None,
            siren: Some(Siren::parse(siren).unwrap()),
            vat_number: Some(VatNumber::parse(vat).unwrap()),
        };
        assert!(identity("303265045", "FR40303265045").checked(None).is_ok());
        assert_eq!(
            identity("732829320", "FR40303265045").checked(None),
            Err(IdentityProblem::VatOfAnotherSiren)
        );
        assert!(
            identity("732829320", "BE0123456789").checked(None).is_ok(),
            "a number of another country is not made of a SIREN"
        );
        let siret = Some("73282932000074");
        assert!(identity("732829320", "FR44732829320").checked(siret).is_ok());
        assert_eq!(
            identity("303265045", "FR40303265045").checked(siret),
            Err(IdentityProblem::SiretOfAnotherSiren)
        );
    }

    #[test]
    fn addresses_take_assigned_countries_and_their_postal_codes() {
        let france = CountryCode::parse("FR").unwrap();
        let belgium = CountryCode::parse("BE").unwrap();
        assert_eq!(CountryCode::parse("XX"), Err(IdentityProblem::NotACountry));
        assert_eq!(CountryCode::parse("fr"), Err(IdentityProblem::NotACountry));
        assert_eq!(CountryCode::parse("FRA"), Err(IdentityProblem::NotACountry));
        assert_eq!(PostalCode::parse("75011", &france).unwrap().as_str(), "75011");
        assert_eq!(
            PostalCode::parse("7501", &france),
            Err(IdentityProblem::NotAFrenchPostalCode)
        );
        assert!(PostalCode::parse("1000", &belgium).is_ok());
        assert_eq!(
            PostalCode::parse("1000;", &belgium),
            Err(IdentityProblem::PostalCodeForm)
        );
        assert_eq!(PostalCode::parse(" - ", &belgium), Err(IdentityProblem::PostalCodeForm));
        assert_eq!(AddressLine::parse("  "), Err(IdentityProblem::Empty));
        assert_eq!(
            AddressLine::parse("12 rue\nde la Paix"),
            Err(IdentityProblem::ControlCharacter)
        );
        assert_eq!(
            LegalName::parse(&"x".repeat(201)),
            Err(IdentityProblem::TooLong(LegalName::MAX_CHARS))
        );
    }

    proptest! {
        /// Changing any one digit of a valid SIREN breaks its check digit: the Luhn check
        /// catches every single-digit typo.
        #[test]
        fn a_single_mistyped_digit_is_caught(n in 0u64..100_000_000, at in 0usize..9, to in 0u8..10) {
            let body = format!("{n:08}");
            let check = (0..10).find(|d| luhn(&format!("{body}{d}"))).unwrap();
            let valid = format!("{body}{check}");
            prop_assert!(Siren::parse(&valid).is_ok());
            let mut typo = valid.clone().into_bytes();
            typo[at] = b'0' + to;
            let typo = String::from_utf8(typo).unwrap();
            prop_assume!(typo != valid);
            prop_assert_eq!(Siren::parse(&typo), Err(IdentityProblem::CheckDigit));
        }

        /// No text makes a parser of the identity panic.
        #[test]
        fn any_text_is_parsed_or_refused(text in "\\PC{0,16}") {
            let france = CountryCode::parse("FR").unwrap();
            let _ = (Siren::parse(&text), VatNumber::parse(&text), CountryCode::parse(&text));
            let _ = (PostalCode::parse(&text, &france), LegalName::parse(&text), AddressLine::parse(&text));
        }

        /// Every valid SIREN has exactly one French VAT number, which parses back to it.
        #[test]
        fn a_sirens_vat_number_parses_back_to_it(n in 0u64..100_000_000) {
            let body = format!("{n:08}");
            let check = (0..10).find(|d| luhn(&format!("{body}{d}"))).unwrap();
            let siren = Siren::parse(&format!("{body}{check}")).unwrap();
            let vat = VatNumber::parse(siren.vat_number().as_str()).unwrap();
            prop_assert_eq!(vat.french_siren(), Some(siren.as_str()));
        }
    }
}
