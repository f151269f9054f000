//! Every operation of the API with the scopes it demands and how freely an automated agent may
//! call it. Route guards ([`crate::auth::Authorized`]) and the OpenAPI document
//! (`x-pos-scopes`, `x-agent-tier`) both read this one table.

use till_core::grant::Grant;

/// How freely an automated caller (an LLM agent reading the OpenAPI document) may call it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Read-only, safe unprompted.
    Allow,
    /// A write a person should confirm first.
    Confirm,
    /// An automated caller must not trigger it unprompted.
    Avoid,
    /// Needs a person physically present.
    Human,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Allow => "allow",
            Tier::Confirm => "confirm",
            Tier::Avoid => "avoid",
            Tier::Human => "human",
        }
    }
}

pub struct Operation {
    pub id: &'static str,
    /// Any one of these suffices; empty for public endpoints.
    pub scopes: &'static [Grant],
    pub tier: Tier,
}

/// Ties an extractor to its operation at compile time.
pub trait Op: Send + Sync + 'static {
    const SPEC: Operation;
}

macro_rules! operations {
    ($($name:ident = $id:literal, [$($scope:ident),*], $tier:ident;)*) => {
        $(
            pub struct $name;
            impl Op for $name {
                const SPEC: Operation = Operation { id: $id, scopes: &[$(Grant::$scope),*], tier: Tier::$tier };
            }
        )*
        /// Every operation, in document order.
        pub const ALL: &[Operation] = &[$($name::SPEC),*];
    };
}

operations! {
    Health = "getHealth", [], Allow;
    Readiness = "getReadiness", [], Allow;
    Metrics = "getMetrics", [], Allow;
    OpenApiDocument = "getOpenApiDocument", [], Allow;
    PutStore = "putStore", [StoresWrite], Confirm;
    GetStore = "getStore", [StoresWrite, CatalogRead], Allow;
    ListStores = "listStores", [StoresWrite, CatalogRead], Allow;
    PutCatalogItem = "putCatalogItem", [CatalogWrite], Confirm;
    GetCatalogItem = "getCatalogItem", [CatalogRead, CatalogWrite], Allow;
    ListCatalogItems = "listCatalogItems", [CatalogRead, CatalogWrite], Allow;
    GetCatalogItemByBarcode = "getCatalogItemByBarcode", [CatalogRead, CatalogWrite], Allow;
    ImportCatalog = "importCatalog", [CatalogWrite], Confirm;
    PutStorePrice = "putStorePrice", [CatalogWrite], Confirm;
    GetStorePrice = "getStorePrice", [CatalogRead, CatalogWrite], Allow;
    DeleteStorePrice = "deleteStorePrice", [CatalogWrite], Confirm;
    GetSyncSnapshot = "getSyncSnapshot", [CatalogRead], Avoid;
    PutStock = "putStock", [StockWrite], Confirm;
    GetStock = "getStock", [StockRead, StockWrite], Allow;
    ListStockMovements = "listStockMovements", [StockRead, StockWrite], Allow;
    RecordStockCount = "recordStockCount", [StockWrite], Confirm;
    SendStockTransfer = "sendStockTransfer", [StockWrite], Confirm;
    ReceiveStockTransfer = "receiveStockTransfer", [StockWrite], Confirm;
    GetStockTransfer = "getStockTransfer", [StockRead, StockWrite], Allow;
    PutStaff = "putStaffMember", [StaffWrite], Confirm;
    GetStaff = "getStaffMember", [StaffRead, StaffWrite], Allow;
    ListStaff = "listStaffMembers", [StaffRead, StaffWrite], Allow;
    GetLoyalty = "getCustomerLoyalty", [CustomersRead], Allow;
    PutCustomer = "putCustomer", [CustomersWrite], Confirm;
    GetCustomer = "getCustomer", [CustomersRead, CustomersWrite], Allow;
    ListCustomers = "listCustomers", [CustomersRead, CustomersWrite], Allow;
    ExportCustomer = "exportCustomer", [CustomersRead], Human;
    EraseCustomer = "eraseCustomer", [CustomersErase], Human;
    PutCoupon = "putCoupon", [CouponsWrite], Confirm;
    GetCoupon = "getCoupon", [CouponsWrite, PromotionsRead], Allow;
    ListCoupons = "listCoupons", [CouponsWrite, PromotionsRead], Allow;
    UpsertPromotion = "upsertPromotion", [PromotionsWrite], Confirm;
    ListPromotions = "listPromotions", [PromotionsRead, PromotionsWrite], Allow;
    GetPromotionRule = "getPromotionRule", [PromotionsRead, PromotionsWrite], Allow;
    ReplacePromotionRule = "replacePromotionRule", [PromotionsWrite], Confirm;
    DeactivatePromotion = "deactivatePromotion", [PromotionsWrite], Confirm;
    OpenSession = "openRegisterSession", [SessionsOpen], Human;
    CloseSession = "closeRegisterSession", [SessionsClose], Confirm;
    GetSession = "getRegisterSession", [SessionsOpen, SessionsClose, SalesRead], Allow;
    ListSessions = "listRegisterSessions", [SessionsClose, SalesRead], Allow;
    RecordCashMovement = "recordCashMovement", [SessionsClose, SalesFinalize], Avoid;
    GetXReport = "getXReport", [SessionsClose, SalesFinalize], Allow;
    RequestPayment = "requestPayment", [SalesFinalize], Avoid;
    RecordPaymentOutcome = "recordPaymentOutcome", [SalesFinalize], Avoid;
    VoidPayment = "voidPayment", [SalesFinalize], Avoid;
    GetPayment = "getPayment", [SalesFinalize, SalesRead], Allow;
    ListPayments = "listPayments", [SalesFinalize, SalesRead], Allow;
    FinalizeSale = "finalizeSale", [SalesFinalize], Avoid;
    PriceCart = "priceCart", [SalesFinalize, CatalogRead], Allow;
    GetSale = "getSale", [SalesRead], Allow;
    SearchSales = "searchSales", [SalesRead], Allow;
    GetSaleLines = "getSaleLines", [SalesRead], Allow;
    CreateReturn = "createReturn", [ReturnsCreate], Avoid;
    GetSaleReturns = "getSaleReturns", [SalesRead], Allow;
    RequestElevation = "requestElevationGrant", [ElevationRequest], Human;
    ListElevationEvents = "listElevationEvents", [StaffRead], Allow;
    GetFiscalKeys = "getFiscalKeys", [], Allow;
    VerifyRegisterJournal = "verifyRegisterJournal", [FiscalRead], Allow;
    GetFiscalChain = "getFiscalChain", [FiscalRead], Allow;
    CloseFiscalPeriod = "closeFiscalPeriod", [FiscalClose], Confirm;
    ListFiscalClosures = "listFiscalClosures", [FiscalRead, FiscalClose], Allow;
    MakeFiscalArchive = "makeFiscalArchive", [FiscalClose], Confirm;
    GetFiscalArchive = "getFiscalArchive", [FiscalRead], Allow;
    GetFecExport = "getFecExport", [FiscalRead], Allow;
    GetEReportingExport = "getEReportingExport", [FiscalRead], Allow;
    GetReceipt = "getReceipt", [SalesRead], Allow;
    GetPublicReceipt = "getPublicReceipt", [], Allow;
    PrintReceipt = "printReceipt", [SalesRead], Confirm;
    SendReceipt = "sendReceipt", [SalesRead], Confirm;
    ListReceiptSends = "listReceiptSends", [SalesRead], Allow;
    IssueGiftCard = "issueGiftCard", [StoredValueWrite], Avoid;
    GetGiftCard = "getGiftCard", [StoredValueRead, StoredValueWrite], Allow;
    BlockGiftCard = "blockGiftCard", [StoredValueWrite], Confirm;
    UnblockGiftCard = "unblockGiftCard", [StoredValueWrite], Confirm;
    GetCreditNote = "getCreditNote", [StoredValueRead, StoredValueWrite], Allow;
    ListEvents = "listEvents", [EventsRead], Allow;
    CreateWebhook = "createWebhook", [WebhooksWrite], Confirm;
    ListWebhooks = "listWebhooks", [WebhooksRead, WebhooksWrite], Allow;
    DeleteWebhook = "deleteWebhook", [WebhooksWrite], Confirm;
    ListWebhookDeliveries = "listWebhookDeliveries", [WebhooksRead, WebhooksWrite], Allow;
    ReplayWebhook = "replayWebhook", [WebhooksWrite], Confirm;
    GetSalesReport = "getSalesReport", [ReportsRead], Allow;
    // Never a tool all the same: see mcp::tools::WITHHELD.
    CreateInvoice = "createInvoice", [InvoicesWrite], Confirm;
    GetInvoice = "getInvoice", [InvoicesWrite, SalesRead], Allow;
    ListInvoices = "listInvoices", [InvoicesWrite, SalesRead], Allow;
    // Any scope of the vocabulary: each tool behind it checks its own operation's scopes.
    Mcp = "sendMcpMessage", [SalesFinalize, SalesRead, ReturnsCreate, ElevationRequest, SessionsOpen,
        SessionsClose, PromotionsRead, PromotionsWrite, StoresWrite, CatalogWrite, StockWrite, StaffWrite,
        CouponsWrite, CatalogRead, StockRead, CustomersRead, StaffRead, FiscalRead, FiscalClose,
        DiscountOverride, PriceOverride, StoredValueRead, StoredValueWrite, EventsRead, WebhooksRead,
        WebhooksWrite, ReportsRead, CustomersWrite, CustomersErase, InvoicesWrite], Allow;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_are_unique() {
        let mut ids: Vec<&str> = ALL.iter().map(|op| op.id).collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len());
    }

    #[test]
    fn agents_read_invoices_and_never_issue_them() {
        assert_eq!(CreateInvoice::SPEC.tier, Tier::Confirm);
        assert!(!crate::mcp::tools::is_offered(&CreateInvoice::SPEC));
        assert!(crate::mcp::tools::is_offered(&GetInvoice::SPEC));
        assert!(crate::mcp::tools::is_offered(&ListInvoices::SPEC));
        assert!(
            crate::mcp::tools::is_offered(&UpsertPromotion::SPEC),
            "other confirm writes stay tools"
        );
    }

    #[test]
    fn the_mcp_endpoint_accepts_every_scope() {
        assert_eq!(Mcp::SPEC.scopes, till_core::grant::Grant::ALL);
    }
}
