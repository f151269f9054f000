//! The answers tickets are committed with: the 201 body of a sale or a return, stored with the
//! ticket and replayed byte for byte. Their shape is the API's, which writes them from the
//! typed ticket; the use cases ask for them before the commit.

use crate::storage::sales::NewSale;
use crate::storage::sales::ReturnOf;
use till_core::committed::SaleAnswer;
use till_core::pricing::CouponEffect;
use till_core::sale::Cart;

pub trait Answers: Send + Sync + 'static {
    /// A sale's answer, complete before the commit: what it commits, with the serial numbers
    /// of its cart's lines and the coupon it redeems.
    fn sale(&self, sale: &NewSale, cart: &Cart, coupon: Option<&CouponEffect>) -> Result<String, serde_json::Error>;

    /// A return's answer, which names the credit note the commit numbers: the ticket, and what
    /// it takes from its original sale.
    fn return_ticket(&self, ticket: &NewSale, original: &ReturnOf) -> SaleAnswer;
}
