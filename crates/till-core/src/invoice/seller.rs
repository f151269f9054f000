//! The seller an invoice names: the store's identity (the `seller` module parses and checks
//! it), complete. An invoice needs what a receipt may go without: the legal name, the address,
//! the VAT number, and for a company registered in France its SIREN.

use crate::seller::{CountryCode, IdentityProblem, LegalName, PostalAddress, SellerIdentity, Siren, VatNumber};

/// The seller, as an invoice prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceSeller {
    pub legal_name: LegalName,
    pub address: PostalAddress,
    /// Absent only for a store whose address is abroad.
    pub siren: Option<Siren>,
    pub vat_number: VatNumber,
}

/// A field of the store's identity, as `PUT /v1/stores/{storeId}` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SellerField {
    LegalName,
    Address,
    Siren,
    VatNumber,
}

impl SellerField {
    pub fn path(self) -> &'static str {
        match self {
            SellerField::LegalName => "legalName",
            SellerField::Address => "address",
            SellerField::Siren => "siren",
            SellerField::VatNumber => "vatNumber",
        }
    }
}

/// Why the store's identity cannot sign an invoice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SellerGap {
    #[error("the store has no {}", .0.path())]
    Missing(SellerField),
    /// Kept before the check between fields existed: the VAT number is another SIREN's.
    #[error("the store's vatNumber {0}")]
    Inconsistent(IdentityProblem),
}

impl InvoiceSeller {
    pub fn of(identity: &SellerIdentity) -> Result<InvoiceSeller, SellerGap> {
        let identity = identity.clone().checked(None).map_err(SellerGap::Inconsistent)?;
        let legal_name = identity.legal_name.ok_or(SellerGap::Missing(SellerField::LegalName))?;
        let address = identity.address.ok_or(SellerGap::Missing(SellerField::Address))?;
        let vat_number = identity.vat_number.ok_or(SellerGap::Missing(SellerField::VatNumber))?;
        if identity.siren.is_none() && address.country.as_str() == CountryCode::FRANCE {
            return Err(SellerGap::Missing(SellerField::Siren));
        }
        Ok(InvoiceSeller {
            legal_name,
            address,
            siren: identity.siren,
            vat_number,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seller::{AddressLine, PostalCode};

    fn identity(country: &str) -> SellerIdentity {
        let country = CountryCode::parse(country).unwrap();
        SellerIdentity {
            legal_name: Some(LegalName::parse("Till Épicerie SAS").unwrap()),
            address: Some(PostalAddress {
                line1: AddressLine::parse("12 rue des Archives").unwrap(),
                line2: None,
                postal_code: PostalCode::parse("75004", &country).unwrap(),
                city: AddressLine::parse("Paris").unwrap(),
                country,
            }),
            siren: Some(Siren::parse("732829320").unwrap()),
            vat_number: Some(VatNumber::parse("FR44732829320").unwrap()),
        }
    }

    #[test]
    fn an_invoice_needs_the_whole_identity() {
        assert!(InvoiceSeller::of(&identity("FR")).is_ok());
        let without = |change: fn(&mut SellerIdentity)| {
            let mut identity = identity("FR");
            change(&mut identity);
            InvoiceSeller::of(&identity)
        };
        assert_eq!(
            without(|i| i.legal_name = None),
            Err(SellerGap::Missing(SellerField::LegalName))
        );
        assert_eq!(
            without(|i| i.address = None),
            Err(SellerGap::Missing(SellerField::Address))
        );
        assert_eq!(without(|i| i.siren = None), Err(SellerGap::Missing(SellerField::Siren)));
        assert_eq!(
            without(|i| i.vat_number = None),
            Err(SellerGap::Missing(SellerField::VatNumber))
        );
        assert_eq!(
            without(|i| i.vat_number = Some(VatNumber::parse("FR40303265045").unwrap())),
            Err(SellerGap::Inconsistent(IdentityProblem::VatOfAnotherSiren))
        );
        let mut abroad = identity("BE");
        abroad.siren = None;
        abroad.vat_number = Some(VatNumber::parse("BE0123456749").unwrap());
        assert!(InvoiceSeller::of(&abroad).is_ok(), "a store abroad has no SIREN");
    }
}
