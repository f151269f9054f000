//! The capabilities the use cases name ([`till_app::storage`]), each implemented by the store
//! for both engines. A family's methods live in the store's modules beside their SQL (a trait is
//! implemented once per type, and a family spans several modules), so each method here forwards to
//! the store's own; what each does is documented on the trait.

use crate::Store;
use jiff::Timestamp;
use std::collections::{BTreeSet, HashMap};
use till_app::storage::ReadAt;
use till_app::storage::access::*;
use till_app::storage::catalog::*;
use till_app::storage::durability::Durability;
use till_app::storage::feed::*;
use till_app::storage::fiscal::*;
use till_app::storage::health::{Backlog, Connections};
use till_app::storage::offers::*;
use till_app::storage::people::*;
use till_app::storage::sales::*;
use till_app::storage::sessions::*;
use till_app::storage::stock::*;
use till_app::storage::stored_value::*;
use till_app::storage::sync::{SnapshotPart, Snapshots, Taken};
use till_app::storage::*;
use till_core::barcode::Gtin;
use till_core::catalog::{ArticleAt, StorePrices};
use till_core::coupon::Coupon;
use till_core::documents::XReport;
use till_core::drawer::Count;
use till_core::events::{EventType, FeedCursor};
use till_core::fiscal::audit::Journal;
use till_core::fiscal::payload::{Period, SaleRecord};
use till_core::fiscal::proof::ProvenTicket;
use till_core::fiscal::{ChainKind, Entry, jet};
use till_core::ids::{
    CouponCode, CustomerId, PrintId, PromotionId, RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId,
    TransferId,
};
use till_core::promotions::PromotionRule;
use till_core::report::{GroupBy, Piece};
use till_core::staff::PinLimits;
use till_core::stock::{ReceivedLine, TransferRecord};
use till_core::store::{StoreProfile, Timezone};
use till_core::stored_value::InstrumentCode;
use till_core::words::NameQuery;

#[async_trait::async_trait]
impl sales::SalesBook for Store {
    async fn commit_sale(&self, sale: NewSale) -> Result<SaleOutcome, StoreError> {
        Store::commit_sale(self, sale).await
    }
    async fn find_sale(&self, transaction_id: &TransactionId) -> Result<Option<(String, String)>, StoreError> {
        Store::find_sale(self, transaction_id).await
    }
    async fn sale_answer(&self, transaction_id: &TransactionId) -> Result<Option<(StoreId, String)>, StoreError> {
        Store::sale_answer(self, transaction_id).await
    }
    async fn sale_record(
        &self,
        transaction_id: &TransactionId,
    ) -> Result<Option<(SaleRecord, Option<SaleRecord>)>, StoreError> {
        Store::sale_record(self, transaction_id).await
    }
    async fn receipt(&self, transaction_id: &TransactionId) -> Result<Option<Receipt>, StoreError> {
        Store::receipt(self, transaction_id).await
    }
    async fn record_print(
        &self,
        transaction_id: &TransactionId,
        print_id: Option<&PrintId>,
        link_token: &str,
        operator: &str,
        now: Timestamp,
    ) -> Result<Printed, StoreError> {
        Store::record_print(self, transaction_id, print_id, link_token, operator, now).await
    }
    async fn linked_receipt(&self, token: &str) -> Result<Option<TransactionId>, StoreError> {
        Store::linked_receipt(self, token).await
    }
    async fn original_sale(&self, transaction_id: &TransactionId) -> Result<Option<OriginalSale>, StoreError> {
        Store::original_sale(self, transaction_id).await
    }
    async fn returns_against(&self, transaction_id: &TransactionId) -> Result<Vec<ReturnSummary>, StoreError> {
        Store::returns_against(self, transaction_id).await
    }
    async fn search_sales(
        &self,
        filter: &SaleFilter,
        window: &Window<Newest<TransactionId>>,
        at: ReadAt,
    ) -> Result<Vec<SaleSummary>, StoreError> {
        Store::search_sales(self, filter, window, at).await
    }
    async fn report_pieces(
        &self,
        scope: &ReportScope,
        group_by: GroupBy,
        at: ReadAt,
    ) -> Result<Vec<Piece>, StoreError> {
        Store::report_pieces(self, scope, group_by, at).await
    }
    async fn roll_up_pending(&self, scope: &ReportScope) -> Result<(), StoreError> {
        Store::roll_up_pending(self, scope).await
    }
}

#[async_trait::async_trait]
impl fiscal::FiscalJournal for Store {
    async fn fiscal_keys(&self) -> Result<Vec<PublishedKey>, StoreError> {
        Store::fiscal_keys(self).await
    }
    fn prove(&self, ticket: &ProvenTicket) -> Result<String, StoreError> {
        Ok(ticket.prove(&**self.fiscal_key()?))
    }
    async fn journal(&self, register_id: &str, kind: ChainKind) -> Result<Vec<Entry>, StoreError> {
        Store::journal(self, register_id, kind).await
    }
    async fn load_journal(&self, register_id: &str) -> Result<Journal, StoreError> {
        Store::load_journal(self, register_id).await
    }
    async fn record_technical_event(
        &self,
        register_id: &str,
        event: jet::TechnicalEvent,
        detail: &str,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Store::record_technical_event(self, register_id, event, detail, now).await
    }
    async fn register_has_journal(&self, register_id: &str) -> Result<bool, StoreError> {
        Store::register_has_journal(self, register_id).await
    }
    async fn make_archive(&self, request: ArchiveRequest, now: Timestamp) -> Result<Option<MadeArchive>, StoreError> {
        Store::make_archive(self, request, now).await
    }
    async fn archive_file(&self, archive_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Store::archive_file(self, archive_id).await
    }
    async fn close_period(
        &self,
        register_id: &str,
        period: Period,
        now: Timestamp,
    ) -> Result<CloseRequest, StoreError> {
        Store::close_period(self, register_id, period, now).await
    }
    async fn closed_days(&self, store_id: Option<&StoreId>, now: Timestamp) -> Result<Vec<ClosedDay>, StoreError> {
        Store::closed_days(self, store_id, now).await
    }
    async fn closures(&self, register_id: &str) -> Result<Vec<SealedClosure>, StoreError> {
        Store::closures(self, register_id).await
    }
    async fn export_days(&self, asked: DaysAsked, at: ReadAt) -> Result<ExportDays, StoreError> {
        Store::export_days(self, asked, at).await
    }
    async fn period_zones(
        &self,
        store_id: Option<&str>,
        register_id: Option<&str>,
    ) -> Result<Vec<Timezone>, StoreError> {
        Store::period_zones(self, store_id, register_id).await
    }
}

#[async_trait::async_trait]
impl sessions::Sessions for Store {
    async fn open_session(&self, open: OpenSession) -> Result<Result<SessionRecord, OpenRefusal>, StoreError> {
        Store::open_session(self, open).await
    }
    async fn close_session(
        &self,
        session_id: SessionId,
        now: Timestamp,
        counted: Vec<Count>,
    ) -> Result<CloseOutcome, StoreError> {
        Store::close_session(self, session_id, now, counted).await
    }
    async fn get_session(&self, session_id: &SessionId) -> Result<Option<SessionRecord>, StoreError> {
        Store::get_session(self, session_id).await
    }
    async fn list_sessions(
        &self,
        filter: &SessionFilter,
        now: Timestamp,
        window: &Window<Newest<SessionId>>,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        Store::list_sessions(self, filter, now, window).await
    }
    async fn session_by_token(&self, token_hash: &[u8]) -> Result<Option<SessionPrincipal>, StoreError> {
        Store::session_by_token(self, token_hash).await
    }
    async fn record_cash_movement(&self, movement: NewMovement) -> Result<MovementOutcome, StoreError> {
        Store::record_cash_movement(self, movement).await
    }
    async fn x_report(
        &self,
        session_id: &SessionId,
        at: Timestamp,
    ) -> Result<Option<(SessionRecord, XReport)>, StoreError> {
        Store::x_report(self, session_id, at).await
    }
}

#[async_trait::async_trait]
impl stored_value::StoredValue for Store {
    async fn issue_gift_card(&self, card: NewCard) -> Result<InstrumentRecord, StoreError> {
        Store::issue_gift_card(self, card).await
    }
    async fn gift_card(
        &self,
        code: &InstrumentCode,
        store: Option<&StoreId>,
    ) -> Result<Option<InstrumentRecord>, StoreError> {
        Store::gift_card(self, code, store).await
    }
    async fn credit_note(&self, code: &str, store: Option<&StoreId>) -> Result<Option<InstrumentRecord>, StoreError> {
        Store::credit_note(self, code, store).await
    }
    async fn block_gift_card(&self, code: &InstrumentCode, blocked: bool, now: Timestamp) -> Result<(), StoreError> {
        Store::block_gift_card(self, code, blocked, now).await
    }
    async fn loyalty_account(&self, customer_id: &CustomerId) -> Result<Option<LoyaltyAccount>, StoreError> {
        Store::loyalty_account(self, customer_id).await
    }
}

#[async_trait::async_trait]
impl catalog::Catalog for Store {
    async fn catalog_items(
        &self,
        store_id: &StoreId,
        sku_ids: &[&SkuId],
        at: Timestamp,
    ) -> Result<HashMap<SkuId, ArticleAt>, StoreError> {
        Store::catalog_items(self, store_id, sku_ids, at).await
    }
    async fn get_catalog_item(&self, sku_id: &SkuId, now: Timestamp) -> Result<Option<CatalogRecord>, StoreError> {
        Store::get_catalog_item(self, sku_id, now).await
    }
    async fn list_catalog_items(
        &self,
        window: &Window<SkuId>,
        now: Timestamp,
    ) -> Result<Vec<CatalogRecord>, StoreError> {
        Store::list_catalog_items(self, window, now).await
    }
    async fn put_catalog_item(&self, write: CatalogWrite, now: Timestamp) -> Result<(CatalogRecord, bool), StoreError> {
        Store::put_catalog_item(self, write, now).await
    }
    async fn write_catalog(&self, writes: Vec<CatalogWrite>, now: Timestamp) -> Result<ImportSummary, StoreError> {
        Store::write_catalog(self, writes, now).await
    }
    async fn search_catalog(
        &self,
        search: &NameQuery,
        window: &Window<WordKey>,
        now: Timestamp,
    ) -> Result<Vec<(WordKey, CatalogRecord)>, StoreError> {
        Store::search_catalog(self, search, window, now).await
    }
    async fn sku_of_barcode(&self, gtin: &Gtin) -> Result<Option<SkuId>, StoreError> {
        Store::sku_of_barcode(self, gtin).await
    }
    async fn put_store_price(&self, write: StorePriceWrite, now: Timestamp) -> Result<(StorePrices, bool), StoreError> {
        Store::put_store_price(self, write, now).await
    }
    async fn remove_store_price(&self, store_id: StoreId, sku_id: SkuId, now: Timestamp) -> Result<bool, StoreError> {
        Store::remove_store_price(self, store_id, sku_id, now).await
    }
    async fn store_prices(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<StorePrices, StoreError> {
        Store::store_prices(self, store_id, sku_id).await
    }
}

#[async_trait::async_trait]
impl offers::Promotions for Store {
    async fn promotions(&self) -> Result<Vec<StoredRule>, StoreError> {
        Store::promotions(self).await
    }
    async fn promotion_revision(&self) -> Result<i64, StoreError> {
        Store::promotion_revision(self).await
    }
    async fn get_promotion(&self, id: &PromotionId) -> Result<Option<StoredRule>, StoreError> {
        Store::get_promotion(self, id).await
    }
    async fn upsert_promotion(&self, rule: PromotionRule, now: Timestamp) -> Result<(StoredRule, bool), StoreError> {
        Store::upsert_promotion(self, rule, now).await
    }
    async fn replace_promotion(
        &self,
        rule: PromotionRule,
        expected: Option<i64>,
        now: Timestamp,
    ) -> Result<Replaced, StoreError> {
        Store::replace_promotion(self, rule, expected, now).await
    }
    async fn deactivate_promotion(&self, id: PromotionId, now: Timestamp) -> Result<Option<StoredRule>, StoreError> {
        Store::deactivate_promotion(self, id, now).await
    }
}

#[async_trait::async_trait]
impl offers::Coupons for Store {
    async fn get_coupon(&self, code: &CouponCode) -> Result<Option<CouponRecord>, StoreError> {
        Store::get_coupon(self, code).await
    }
    async fn list_coupons(&self, window: &Window<CouponCode>) -> Result<Vec<CouponRecord>, StoreError> {
        Store::list_coupons(self, window).await
    }
    async fn put_coupon(
        &self,
        code: CouponCode,
        coupon: Coupon,
        now: Timestamp,
    ) -> Result<(CouponRecord, bool), StoreError> {
        Store::put_coupon(self, code, coupon, now).await
    }
}

#[async_trait::async_trait]
impl stock::Stock for Store {
    async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError> {
        Store::get_stock(self, store_id, sku_id).await
    }
    async fn put_stock(
        &self,
        store_id: StoreId,
        sku_id: SkuId,
        on_hand: i64,
        now: Timestamp,
    ) -> Result<StockLevel, StoreError> {
        Store::put_stock(self, store_id, sku_id, on_hand, now).await
    }
    async fn stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        window: &Window<i64>,
    ) -> Result<Vec<Movement>, StoreError> {
        Store::stock_movements(self, store_id, sku_id, window).await
    }
    async fn latest_stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        count: usize,
    ) -> Result<Vec<Movement>, StoreError> {
        Store::latest_stock_movements(self, store_id, sku_id, count).await
    }
    async fn record_stock_count(&self, count: NewCount) -> Result<CountOutcome, StoreError> {
        Store::record_stock_count(self, count).await
    }
    async fn send_transfer(&self, transfer: NewTransfer) -> Result<SendOutcome, StoreError> {
        Store::send_transfer(self, transfer).await
    }
    async fn receive_transfer(
        &self,
        transfer_id: TransferId,
        lines: Vec<ReceivedLine>,
        at: Timestamp,
    ) -> Result<ReceiveOutcome, StoreError> {
        Store::receive_transfer(self, transfer_id, lines, at).await
    }
    async fn get_transfer(&self, transfer_id: &TransferId) -> Result<Option<TransferRecord>, StoreError> {
        Store::get_transfer(self, transfer_id).await
    }
}

#[async_trait::async_trait]
impl feed::Feed for Store {
    async fn events_after(
        &self,
        after: FeedCursor,
        limit: i64,
        types: &[EventType],
    ) -> Result<Vec<FeedEvent>, StoreError> {
        Store::events_after(self, after, limit, types).await
    }
    async fn feed_head(&self) -> Result<FeedCursor, StoreError> {
        Store::feed_head(self).await
    }
    async fn webhooks(&self) -> Result<Vec<EndpointRecord>, StoreError> {
        Store::webhooks(self).await
    }
    async fn create_webhook(&self, endpoint: NewEndpoint) -> Result<EndpointRecord, StoreError> {
        Store::create_webhook(self, endpoint).await
    }
    async fn delete_webhook(&self, id: String) -> Result<bool, StoreError> {
        Store::delete_webhook(self, id).await
    }
    async fn replay_webhook(&self, id: String, after: FeedCursor, now: Timestamp) -> Result<Replayed, StoreError> {
        Store::replay_webhook(self, id, after, now).await
    }
    async fn webhook_deliveries(&self, id: &str, limit: i64) -> Result<Option<Vec<DeliveryRecord>>, StoreError> {
        Store::webhook_deliveries(self, id, limit).await
    }
    async fn claim_webhooks(
        &self,
        token: String,
        now: Timestamp,
        until: Timestamp,
        limit: i64,
    ) -> Result<Vec<Claimed>, StoreError> {
        Store::claim_webhooks(self, token, now, until, limit).await
    }
    async fn record_progress(&self, id: &str, lease: &Lease, progress: Progress) -> Result<bool, StoreError> {
        Store::record_progress(self, id, lease, progress).await
    }
}

#[async_trait::async_trait]
impl people::People for Store {
    async fn get_staff(&self, subject: &Subject) -> Result<Option<StaffRecord>, StoreError> {
        Store::get_staff(self, subject).await
    }
    async fn list_staff(&self, window: &Window<Subject>) -> Result<Vec<StaffRecord>, StoreError> {
        Store::list_staff(self, window).await
    }
    async fn put_staff(&self, put: PutStaff, now: Timestamp) -> Result<(StaffRecord, bool), StoreError> {
        Store::put_staff(self, put, now).await
    }
    async fn reserve_pin_attempt(
        &self,
        subject: &str,
        register: &RegisterId,
        now: Timestamp,
        limits: PinLimits,
        lockout: std::time::Duration,
    ) -> Result<PinAttempt, StoreError> {
        Store::reserve_pin_attempt(self, subject, register, now, limits, lockout).await
    }
    async fn clear_pin_failures(&self, subject: &str, register: &RegisterId, now: Timestamp) -> Result<(), StoreError> {
        Store::clear_pin_failures(self, subject, register, now).await
    }
    async fn get_store(&self, store_id: &StoreId) -> Result<Option<StoreRecord>, StoreError> {
        Store::get_store(self, store_id).await
    }
    async fn list_stores(&self, window: &Window<StoreId>) -> Result<Vec<StoreRecord>, StoreError> {
        Store::list_stores(self, window).await
    }
    async fn put_store(
        &self,
        store_id: StoreId,
        profile: StoreProfile,
        now: Timestamp,
    ) -> Result<(StoreRecord, bool), StoreError> {
        Store::put_store(self, store_id, profile, now).await
    }
    async fn store_in_network(&self, store_id: &StoreId) -> Result<Option<bool>, StoreError> {
        Store::store_in_network(self, store_id).await
    }
}

#[async_trait::async_trait]
impl access::Access for Store {
    async fn issue_grant(&self, grant: NewGrant) -> Result<(), StoreError> {
        Store::issue_grant(self, grant).await
    }
    async fn grant_by_token(&self, token_hash: &[u8]) -> Result<Option<GrantRecord>, StoreError> {
        Store::grant_by_token(self, token_hash).await
    }
    async fn count_elevation_attempt(
        &self,
        subject: &str,
        now: Timestamp,
        limit: u32,
        window: std::time::Duration,
    ) -> Result<RateDecision, StoreError> {
        Store::count_elevation_attempt(self, subject, now, limit, window).await
    }
    async fn record_elevation_event(&self, event: ElevationEvent, now: Timestamp) -> Result<(), StoreError> {
        Store::record_elevation_event(self, event, now).await
    }
    async fn elevation_events(
        &self,
        manager: Option<&str>,
        register: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ElevationEvent>, StoreError> {
        Store::elevation_events(self, manager, register, limit).await
    }
    async fn issue_confirmation(&self, confirmation: NewConfirmation) -> Result<(), StoreError> {
        Store::issue_confirmation(self, confirmation).await
    }
    async fn spend_confirmation(&self, token_hash: Vec<u8>) -> Result<Option<SpentConfirmation>, StoreError> {
        Store::spend_confirmation(self, token_hash).await
    }
    async fn sign_out_of_console(
        &self,
        token_hash: Vec<u8>,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Store::sign_out_of_console(self, token_hash, expires_at, now).await
    }
    async fn signed_out_of_console(&self, token_hash: &[u8], now: Timestamp) -> Result<bool, StoreError> {
        Store::signed_out_of_console(self, token_hash, now).await
    }
}

#[async_trait::async_trait]
impl Snapshots for Store {
    async fn store_snapshot(
        &self,
        store_id: &StoreId,
        now: Timestamp,
        parts: tokio::sync::mpsc::Sender<SnapshotPart>,
    ) -> Result<Taken, StoreError> {
        Store::store_snapshot(self, store_id, now, parts).await
    }
}

#[async_trait::async_trait]
impl Durability for Store {
    async fn barrier(&self) -> Result<(), StoreError> {
        Store::barrier(self).await
    }
}

#[async_trait::async_trait]
impl Health for Store {
    async fn ping(&self) -> Result<(), StoreError> {
        Store::ping(self).await
    }
    fn engine(&self) -> Engine {
        Store::engine(self)
    }
    fn connections(&self) -> Connections {
        Store::connections(self)
    }
    async fn backlog(&self) -> Result<Backlog, StoreError> {
        Store::backlog(self).await
    }
}

#[async_trait::async_trait]
impl customers::Customers for Store {
    async fn get_customer(&self, customer_id: &CustomerId) -> Result<Option<customers::CustomerRecord>, StoreError> {
        Store::get_customer(self, customer_id).await
    }
    async fn customer_groups(&self, customer_id: &CustomerId) -> Result<BTreeSet<String>, StoreError> {
        Store::customer_groups(self, customer_id).await
    }
    async fn put_customer(
        &self,
        put: customers::PutCustomer,
        now: Timestamp,
    ) -> Result<(customers::CustomerRecord, bool), StoreError> {
        Store::put_customer(self, put, now).await
    }
    async fn search_customers(
        &self,
        search: &customers::CustomerSearch,
        group: Option<&str>,
        window: &Window<customers::CustomerKey>,
    ) -> Result<Vec<(customers::CustomerKey, customers::CustomerRecord)>, StoreError> {
        Store::search_customers(self, search, group, window).await
    }
    async fn export_customer(&self, customer_id: &CustomerId) -> Result<Option<customers::CustomerExport>, StoreError> {
        Store::export_customer(self, customer_id).await
    }
    async fn erase_customer(
        &self,
        customer_id: &CustomerId,
        reason: customers::ErasureReason,
        now: Timestamp,
    ) -> Result<Option<customers::CustomerRecord>, StoreError> {
        Store::erase_customer(self, customer_id, reason, now).await
    }
    async fn claim_retention(&self, holder: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError> {
        Store::claim_retention(self, holder, now, until).await
    }
    async fn inactive_customers(
        &self,
        before: Timestamp,
        after: Option<&CustomerId>,
        limit: usize,
    ) -> Result<Vec<CustomerId>, StoreError> {
        Store::inactive_customers(self, before, after, limit).await
    }
}

#[async_trait::async_trait]
impl till_app::storage::payments::Payments for Store {
    async fn record_attempt(&self, attempt: &till_core::payment::Attempt) -> Result<bool, StoreError> {
        Store::record_attempt(self, attempt).await
    }
    async fn get_attempt(
        &self,
        payment_id: &till_core::payment::PaymentId,
    ) -> Result<Option<till_core::payment::Attempt>, StoreError> {
        Store::get_attempt(self, payment_id).await
    }
    async fn replace_attempt(
        &self,
        from: till_core::payment::PaymentState,
        next: &till_core::payment::Attempt,
        change: till_app::storage::payments::PaymentChange,
    ) -> Result<(), StoreError> {
        Store::replace_attempt(self, from, next, change).await
    }
    async fn list_attempts(
        &self,
        filter: &till_app::storage::payments::PaymentFilter,
        window: &Window<till_core::payment::PaymentId>,
    ) -> Result<Vec<till_core::payment::Attempt>, StoreError> {
        Store::list_attempts(self, filter, window).await
    }
    async fn awaiting_capture(
        &self,
        cutoff: Timestamp,
        limit: usize,
    ) -> Result<Vec<till_core::payment::Attempt>, StoreError> {
        Store::awaiting_capture(self, cutoff, limit).await
    }
    async fn claim_orphan_sweep(&self, holder: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError> {
        Store::claim_orphan_sweep(self, holder, now, until).await
    }
}

#[async_trait::async_trait]
impl till_app::storage::receipt_mail::ReceiptMail for Store {
    async fn queue_receipt_send(
        &self,
        send: till_app::storage::receipt_mail::NewSend,
    ) -> Result<till_app::storage::receipt_mail::Queued, StoreError> {
        Store::queue_receipt_send(self, send).await
    }
    async fn receipt_sends(
        &self,
        transaction_id: &TransactionId,
    ) -> Result<Vec<till_app::storage::receipt_mail::SendRecord>, StoreError> {
        Store::receipt_sends(self, transaction_id).await
    }
    async fn claim_receipt_sends(
        &self,
        token: &str,
        now: Timestamp,
        until: Timestamp,
        most: i64,
    ) -> Result<Vec<till_app::storage::receipt_mail::ClaimedSend>, StoreError> {
        Store::claim_receipt_sends(self, token, now, until, most).await
    }
    async fn record_send(
        &self,
        id: &till_core::ids::SendId,
        lease: &str,
        outcome: till_app::storage::receipt_mail::SendOutcome,
    ) -> Result<bool, StoreError> {
        Store::record_send(self, id, lease, outcome).await
    }
    async fn give_up_sends_to_customer(
        &self,
        customer_id: &CustomerId,
        failure: till_core::e_receipt::MailFailure,
    ) -> Result<u64, StoreError> {
        Store::give_up_sends_to_customer(self, customer_id, failure).await
    }
    async fn mail_queue(&self) -> Result<till_app::storage::receipt_mail::MailQueue, StoreError> {
        Store::mail_queue(self).await
    }
}

#[async_trait::async_trait]
impl till_app::storage::invoices::Invoices for Store {
    async fn issue_invoice(
        &self,
        new: till_app::storage::invoices::NewInvoice,
    ) -> Result<till_app::storage::invoices::IssueOutcome, StoreError> {
        Store::issue_invoice(self, new).await
    }
    async fn invoice(
        &self,
        invoice_id: &till_core::ids::InvoiceId,
    ) -> Result<Option<till_app::storage::invoices::StoredInvoice>, StoreError> {
        Store::invoice(self, invoice_id).await
    }
    async fn invoice_covering(
        &self,
        transaction_id: &TransactionId,
    ) -> Result<Option<till_app::storage::invoices::InvoiceSummary>, StoreError> {
        Store::invoice_covering(self, transaction_id).await
    }
    async fn list_invoices(
        &self,
        filter: &till_app::storage::invoices::InvoiceFilter,
        window: &Window<Newest<till_core::ids::InvoiceId>>,
        at: ReadAt,
    ) -> Result<Vec<till_app::storage::invoices::InvoiceSummary>, StoreError> {
        Store::list_invoices(self, filter, window, at).await
    }
    async fn sealed_invoices(
        &self,
        register_id: &str,
    ) -> Result<Vec<till_app::storage::invoices::SealedInvoice>, StoreError> {
        Store::sealed_invoices(self, register_id).await
    }
}
