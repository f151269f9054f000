//! The business customer an invoice is made out to. Each field is parsed by the rules the
//! seller's identity follows (the `seller` module): a name, an optional SIREN, an optional VAT
//! number that, when French, must be the SIREN's, and a postal address with its country.
//! Nothing else about the buyer is kept: no loyalty account, no customer profile.

use crate::seller::{
    AddressLine, CountryCode, IdentityProblem, LegalName, PostalAddress, PostalCode, Siren, VatNumber,
};

/// The buyer as the request gives it, not yet read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuyerText<'a> {
    pub name: &'a str,
    pub siren: Option<&'a str>,
    pub vat_number: Option<&'a str>,
    pub line1: &'a str,
    pub line2: Option<&'a str>,
    pub postal_code: &'a str,
    pub city: &'a str,
    pub country: &'a str,
}

/// The buyer, every field parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buyer {
    pub name: LegalName,
    pub siren: Option<Siren>,
    pub vat_number: Option<VatNumber>,
    pub address: PostalAddress,
}

/// A field of the buyer, as the request names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuyerField {
    Name,
    Siren,
    VatNumber,
    Line1,
    Line2,
    PostalCode,
    City,
    Country,
}

impl BuyerField {
    /// The field's path in the request's `buyer` object.
    pub fn path(self) -> &'static str {
        match self {
            BuyerField::Name => "name",
            BuyerField::Siren => "siren",
            BuyerField::VatNumber => "vatNumber",
            BuyerField::Line1 => "address.line1",
            BuyerField::Line2 => "address.line2",
            BuyerField::PostalCode => "address.postalCode",
            BuyerField::City => "address.city",
            BuyerField::Country => "address.country",
        }
    }
}

/// A field refused, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} {problem}", field.path())]
pub struct BuyerRefusal {
    pub field: BuyerField,
    pub problem: IdentityProblem,
}

impl Buyer {
    /// Reads every field, and answers every field refused at once. A postal code is read by its
    /// country's rule, so it is checked only once the country is known; a French VAT number
    /// given with a SIREN must be that SIREN's.
    pub fn parse(text: &BuyerText<'_>) -> Result<Buyer, Vec<BuyerRefusal>> {
        let mut refused = Vec::new();
        let r = &mut refused;
        let name = take(r, BuyerField::Name, LegalName::parse(text.name));
        let siren = text.siren.map(|siren| take(r, BuyerField::Siren, Siren::parse(siren)));
        let vat_number = text
            .vat_number
            .map(|vat| take(r, BuyerField::VatNumber, VatNumber::parse(vat)));
        let line1 = take(r, BuyerField::Line1, AddressLine::parse(text.line1));
        let line2 = text
            .line2
            .map(|line| take(r, BuyerField::Line2, AddressLine::parse(line)));
        let city = take(r, BuyerField::City, AddressLine::parse(text.city));
        let country = take(r, BuyerField::Country, CountryCode::parse(text.country));
        let postal_code = country
            .as_ref()
            .and_then(|country| take(r, BuyerField::PostalCode, PostalCode::parse(text.postal_code, country)));
        if let (Some(Some(siren)), Some(Some(vat))) = (&siren, &vat_number)
            && vat.french_siren().is_some_and(|of| of != siren.as_str())
        {
            r.push(BuyerRefusal {
                field: BuyerField::VatNumber,
                problem: IdentityProblem::VatOfAnotherSiren,
            });
        }
        // A field read as `None` has its refusal noted: with none noted, every field was read.
        match (name, line1, postal_code, city, country) {
            (Some(name), Some(line1), Some(postal_code), Some(city), Some(country)) if refused.is_empty() => {
                Ok(Buyer {
                    name,
                    siren: siren.flatten(),
                    vat_number: vat_number.flatten(),
                    address: PostalAddress {
                        line1,
                        line2: line2.flatten(),
                        postal_code,
                        city,
                        country,
                    },
                })
            }
            _ => Err(refused),
        }
    }
}

/// The value read, or `None` with the field's refusal noted.
fn take<T>(refused: &mut Vec<BuyerRefusal>, field: BuyerField, read: Result<T, IdentityProblem>) -> Option<T> {
    read.map_err(|problem| refused.push(BuyerRefusal { field, problem }))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn paris() -> BuyerText<'static> {
        BuyerText {
            name: "Boulangerie Martin SARL",
            siren: Some("303265045"),
            vat_number: Some("FR40303265045"),
            line1: "3 rue du Four",
            line2: None,
            postal_code: "75006",
            city: "Paris",
            country: "FR",
        }
    }

    #[test]
    fn a_french_company_is_read_whole() {
        let buyer = Buyer::parse(&paris()).unwrap();
        assert_eq!(buyer.name.as_str(), "Boulangerie Martin SARL");
        assert_eq!(buyer.siren.unwrap().as_str(), "303265045");
        assert_eq!(buyer.vat_number.unwrap().as_str(), "FR40303265045");
        assert_eq!(buyer.address.postal_code.as_str(), "75006");
        assert_eq!(buyer.address.line2, None);
    }

    #[test]
    fn a_buyer_abroad_gives_its_own_vat_number_and_postal_code() {
        let text = BuyerText {
            name: "Bakkerij Peeters BV",
            siren: None,
            vat_number: Some("BE0123456749"),
            line1: "Grote Markt 1",
            line2: Some("Bus 2"),
            postal_code: "1000",
            city: "Brussel",
            country: "BE",
        };
        let buyer = Buyer::parse(&text).unwrap();
        assert_eq!(buyer.address.country.as_str(), "BE");
        assert_eq!(buyer.address.line2.unwrap().as_str(), "Bus 2");
    }

    #[test]
    fn every_field_refused_is_named_at_once() {
        let text = BuyerText {
            name: " ",
            siren: Some("303265046"),
            vat_number: Some("FR41303265045"),
            line1: "",
            line2: Some("a\u{7}b"),
            postal_code: "750",
            city: "Paris",
            country: "FR",
        };
        let refused = Buyer::parse(&text).unwrap_err();
        let named: Vec<(&str, IdentityProblem)> = refused.iter().map(|r| (r.field.path(), r.problem)).collect();
        assert_eq!(
            named,
            vec![
                ("name", IdentityProblem::Empty),
                ("siren", IdentityProblem::CheckDigit),
                ("vatNumber", IdentityProblem::VatKey),
                ("address.line1", IdentityProblem::Empty),
                ("address.line2", IdentityProblem::ControlCharacter),
                ("address.postalCode", IdentityProblem::NotAFrenchPostalCode),
            ]
        );
        assert_eq!(refused[0].to_string(), "name must not be empty");
    }

    #[test]
    fn a_french_vat_number_must_be_the_sirens() {
        let text = BuyerText {
            vat_number: Some("FR44732829320"),
            ..paris()
        };
        assert_eq!(
            Buyer::parse(&text),
            Err(vec![BuyerRefusal {
                field: BuyerField::VatNumber,
                problem: IdentityProblem::VatOfAnotherSiren
            }])
        );
        let unknown_country = BuyerText {
            country: "XX",
            postal_code: "anything;",
            ..paris()
        };
        assert_eq!(
            Buyer::parse(&unknown_country).unwrap_err(),
            vec![BuyerRefusal {
                field: BuyerField::Country,
                problem: IdentityProblem::NotACountry
            }],
            "a postal code is read only by a known country's rule"
        );
    }

    proptest! {
        /// No text in any field makes the parser panic; what it accepts has no control character.
        #[test]
        fn any_buyer_text_is_read_or_refused(
            fields in prop::collection::vec("\\PC{0,12}|[\\x00-\\x1f]{0,3}", 8),
            optional in prop::collection::vec(any::<bool>(), 3),
        ) {
            let text = BuyerText {
                name: &fields[0],
                siren: optional[0].then_some(fields[1].as_str()),
                vat_number: optional[1].then_some(fields[2].as_str()),
                line1: &fields[3],
                line2: optional[2].then_some(fields[4].as_str()),
                postal_code: &fields[5],
                city: &fields[6],
                country: &fields[7],
            };
            match Buyer::parse(&text) {
                Ok(buyer) => prop_assert!(!buyer.name.as_str().chars().any(char::is_control)),
                Err(refused) => prop_assert!(!refused.is_empty()),
            }
        }
    }
}
