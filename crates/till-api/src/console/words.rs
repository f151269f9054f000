//! Every word the console writes, in each language it speaks: one table per language, checked
//! by the compiler (a missing word is a build error, never a key not found at run time), and
//! the names of the core's enums (tender methods, stock reasons, ...) by exhaustive matches.
//! Amounts, dates and rates are written by `layout`.

use super::customers::Problem;
use super::language::Language;
use maud::{Markup, html};
use std::borrow::Cow;
use till_core::customer::{ConsentFlag, ConsentSource};
use till_core::e_receipt::{RecipientKind, SendState};
use till_core::payment::PaymentState;
use till_core::sale::{SaleType, TenderMethod};
use till_core::stock::StockReason;
use till_core::stored_value::{ActivityKind, InstrumentKind, InstrumentState};

/// The words of one language.
pub struct Words {
    // The frame.
    pub console: &'static str,
    pub pages: &'static str,
    pub language: &'static str,
    pub sign_in: &'static str,
    pub sign_out: &'static str,
    pub signed_in_as: &'static str,
    pub nav_today: &'static str,
    pub nav_registers: &'static str,
    pub nav_sales: &'static str,
    pub nav_promotions: &'static str,
    pub nav_stored_value: &'static str,
    pub nav_stock: &'static str,
    pub nav_customers: &'static str,

    // Pickers and forms.
    pub store: &'static str,
    pub every_store: &'static str,
    pub every_store_lower: &'static str,
    pub customer_groups: &'static str,
    pub day: &'static str,
    pub show: &'static str,
    pub search: &'static str,
    pub cancel: &'static str,
    pub when: &'static str,
    pub total: &'static str,
    pub amount: &'static str,
    pub state: &'static str,
    pub stores: &'static str,
    pub none: &'static str,
    /// A colon as the language writes it after a word.
    pub colon: &'static str,

    // Signing in.
    pub sign_in_intro: fn() -> Markup,
    pub token: &'static str,
    pub token_required: &'static str,
    pub token_malformed: &'static str,
    /// Shown instead of the identity check's own reason, which is in English.
    pub token_refused: Option<&'static str>,
    pub token_signed_out: &'static str,
    pub token_not_kept: &'static str,

    // Refusals.
    pub not_allowed: &'static str,
    pub lacks_scope: fn(&str) -> Markup,
    pub form_refused: &'static str,
    pub form_refused_text: &'static str,
    pub no_such_page: &'static str,
    pub bad_request: &'static str,
    pub not_found: &'static str,
    pub refused: &'static str,
    pub unavailable: &'static str,
    pub failed: &'static str,
    pub too_large: &'static str,
    /// What each kind of refusal means, before the API's own words (in English); none where
    /// those words are the sentence itself.
    pub bad_request_text: Option<&'static str>,
    pub not_found_text: Option<&'static str>,
    pub refused_text: Option<&'static str>,
    pub unavailable_text: &'static str,
    pub failed_text: &'static str,
    pub needs_scope_note: fn(&str, &str) -> Markup,

    // Today.
    pub sales_count: &'static str,
    pub revenue: &'static str,
    pub average_basket: &'static str,
    pub returns: &'static str,
    pub items: &'static str,
    pub sales_per_hour: &'static str,
    pub hour_bar: fn(u8, i64, &str) -> String,
    pub tenders: &'static str,
    pub method: &'static str,
    pub tickets: &'static str,
    pub no_sales_this_day: &'static str,
    pub vat: &'static str,
    pub rate: &'static str,
    pub base: &'static str,
    pub total_with_vat: &'static str,

    // Registers.
    pub registers: &'static str,
    pub no_register: &'static str,
    pub register: &'static str,
    pub open_session: fn(Markup, &str, &str, &str) -> Markup,
    pub no_session_open: &'static str,
    pub day_closed: fn(&str) -> String,
    pub period_closed: fn(&str, &str) -> String,
    pub verify_journal: &'static str,
    pub verifying_a_journal: &'static str,
    pub z_reports: &'static str,
    pub card_payments: &'static str,
    pub no_card_payment: &'static str,
    pub seeing_card_payments: &'static str,
    pub payment: &'static str,
    pub asked_at: &'static str,
    pub terminal: &'static str,
    pub card: &'static str,
    pub payment_state: fn(PaymentState) -> &'static str,
    pub closed: &'static str,
    pub cashier: &'static str,
    pub journal_holds: fn(&str) -> String,
    pub journal_broken: fn(&str) -> String,
    pub chain: &'static str,
    pub entries: &'static str,
    pub broken: &'static str,
    pub verified: &'static str,
    pub not_reached: &'static str,
    pub first_failure: &'static str,
    pub entry: &'static str,

    // Sales.
    pub sales: &'static str,
    pub customer: &'static str,
    pub kind: &'static str,
    pub any: &'static str,
    pub ticket: &'static str,
    pub seller: &'static str,
    pub no_sale_matches: &'static str,
    pub older_sales: &'static str,
    pub transaction: &'static str,
    pub ticket_of_chain: fn(i64) -> String,
    pub receipt: &'static str,
    pub printed_original: &'static str,
    pub printed_duplicata: fn(i64, i64) -> String,
    pub print_for_customer: &'static str,
    pub receipt_shown: &'static str,
    pub print: &'static str,
    pub print_duplicata: &'static str,
    pub emails: &'static str,
    pub email_queued: &'static str,
    pub email_queued_at: &'static str,
    pub email_to: &'static str,
    pub email_state: &'static str,
    pub email_attempts: &'static str,
    pub email_address: &'static str,
    pub send_by_email: &'static str,
    pub back_to_sales: &'static str,

    // Invoices of a sale.
    pub invoices: &'static str,
    pub invoice_kind: &'static str,
    pub credit_invoice: &'static str,
    pub invoice_issued_on: &'static str,
    pub invoice_buyer: &'static str,
    pub invoice_total: &'static str,
    pub invoice_pdf: &'static str,
    pub invoice_issued: &'static str,
    pub issue_invoice: &'static str,
    pub issue_credit_invoice: &'static str,
    pub buyer_name: &'static str,
    pub buyer_siren: &'static str,
    pub buyer_vat_number: &'static str,
    pub buyer_line1: &'static str,
    pub buyer_line2: &'static str,
    pub buyer_postal_code: &'static str,
    pub buyer_city: &'static str,
    pub buyer_country: &'static str,

    // Promotions.
    pub promotions: &'static str,
    pub rule: &'static str,
    pub valid: &'static str,
    pub priority: &'static str,
    pub exclusive: &'static str,
    pub active: &'static str,
    pub inactive: &'static str,
    pub deactivate: &'static str,
    pub deactivating_a_rule: &'static str,
    pub no_rule: &'static str,
    pub zone_note: fn(&str) -> String,
    pub deactivate_title: &'static str,
    pub deactivate_text: fn(&str, &str) -> Markup,
    pub deactivate_confirm: &'static str,
    pub already_inactive: &'static str,

    // Gift cards and credit notes.
    pub stored_value_title: &'static str,
    pub code_label: &'static str,
    pub look_up: &'static str,
    pub no_such_code: &'static str,
    pub number: &'static str,
    pub balance: &'static str,
    pub issued: &'static str,
    pub expires: &'static str,
    pub never: &'static str,
    pub ledger: &'static str,
    pub what: &'static str,
    pub balance_after: &'static str,
    pub sale: &'static str,

    // Stock.
    pub stock: &'static str,
    pub article_query: &'static str,
    pub no_article: &'static str,
    pub on_hand: &'static str,
    pub latest_movements: &'static str,
    pub latest_movements_in: fn(&str) -> String,
    pub no_movement: &'static str,
    pub reason: &'static str,
    pub units: &'static str,
    pub reference: &'static str,

    // Customers.
    pub customers: &'static str,
    pub customer_query: &'static str,
    pub group: &'static str,
    pub display_name: &'static str,
    pub customer_id: &'static str,
    pub email: &'static str,
    pub phone: &'static str,
    pub loyalty_points: &'static str,
    pub last_activity: &'static str,
    pub no_customer: &'static str,
    pub more_customers: &'static str,
    pub postal_code: &'static str,
    pub birth_date: &'static str,
    pub groups: &'static str,
    pub one_per_line: &'static str,
    pub notes: &'static str,
    pub consent: &'static str,
    pub consent_state: &'static str,
    pub source: &'static str,
    pub consent_history: &'static str,
    pub no_consent_change: &'static str,
    pub created: &'static str,
    pub updated: &'static str,
    pub erased_at: &'static str,
    pub was_erased: fn(&str) -> String,
    pub export_customer: &'static str,
    pub erase: &'static str,
    pub back_to_customers: &'static str,
    pub back_to_customer: &'static str,
    pub exporting_a_customer: &'static str,
    pub erasing_a_customer: &'static str,
    pub editing_a_profile: &'static str,
    pub personal_id: &'static str,
    pub edit_profile: &'static str,
    pub nothing_saved: &'static str,
    pub save: &'static str,
    pub erase_title: &'static str,
    pub erase_intro: fn(Option<&str>, &str) -> Markup,
    pub erase_profile: &'static str,
    pub erase_consent: fn(usize) -> String,
    pub erase_points: fn(i64) -> String,
    pub erase_sales_keep: fn(&str) -> Markup,
    pub erase_for_good: &'static str,
    pub erase_confirm: &'static str,
}

pub const ENGLISH: Words = Words {
    console: "till console",
    pages: "Pages",
    language: "Language",
    sign_in: "Sign in",
    sign_out: "Sign out",
    signed_in_as: "Signed in as",
    nav_today: "Today",
    nav_registers: "Registers",
    nav_sales: "Sales",
    nav_promotions: "Promotions",
    nav_stored_value: "Gift cards & credit notes",
    nav_stock: "Stock",
    nav_customers: "Customers",

    store: "Store",
    every_store: "Every store",
    every_store_lower: "every store",
    customer_groups: "for the customer groups",
    day: "Day",
    show: "Show",
    search: "Search",
    cancel: "Cancel",
    when: "When",
    total: "Total",
    amount: "Amount",
    state: "State",
    stores: "Stores",
    none: "—",
    colon: ": ",

    sign_in_intro: || {
        html! {
            "Paste a back-office token (the demo prints one as " code { "TILL_TOKEN" } "). "
            "It is kept in a cookie this browser sends to the console alone."
        }
    },
    token: "Token",
    token_required: "The token is required.",
    token_malformed: "This is not a back-office token as issued, such as the demo's TILL_TOKEN.",
    token_refused: None,
    token_signed_out: "This token was signed out of the console; sign in with a new one.",
    token_not_kept: "This token cannot be kept in a cookie.",

    not_allowed: "Not allowed",
    lacks_scope: |scopes| {
        html! {
            "Your token lacks the scope " code { (scopes) } ", which this page needs. "
            "Ask for a token that holds it, then sign in again."
        }
    },
    form_refused: "Form refused",
    form_refused_text: "This form was out of date or sent from another site, so nothing was changed. \
                        Go back, reload the page and try again.",
    no_such_page: "There is no such page in the console.",
    bad_request: "Bad request",
    not_found: "Not found",
    refused: "Refused",
    unavailable: "Service unavailable",
    failed: "Something went wrong",
    too_large: "Too large",
    bad_request_text: None,
    not_found_text: None,
    refused_text: None,
    unavailable_text: "The database cannot be reached just now. Try again in a moment.",
    failed_text: "The page could not be made. The error is in the server's log.",
    needs_scope_note: |what, scope| html! { (what) " needs the scope " code { (scope) } "." },

    sales_count: "Sales",
    revenue: "Revenue",
    average_basket: "Average basket",
    returns: "Returns",
    items: "Items",
    sales_per_hour: "Sales per hour",
    hour_bar: |hour, sales, amount| {
        let noun = if sales == 1 { "sale" } else { "sales" };
        format!(
            "{hour:02}:00–{:02}:00: {sales} {noun}, {amount}",
            hour.saturating_add(1)
        )
    },
    tenders: "Tenders",
    method: "Method",
    tickets: "Tickets",
    no_sales_this_day: "No sales this day.",
    vat: "VAT",
    rate: "Rate",
    base: "Base",
    total_with_vat: "Total",

    registers: "Registers",
    no_register: "No register of this store has opened a session yet.",
    register: "Register",
    open_session: |session, cashier, since, float| {
        html! { "Open session " (session) " by " (cashier) " since " (since) ", float " (float) "." }
    },
    no_session_open: "No session open.",
    day_closed: |day| format!("Day {day} is closed: no session opens on this register until tomorrow."),
    period_closed: |day, through| {
        format!(
            "Day {day} is closed, with the period through {through}: no session opens on this \
             register until that period is over."
        )
    },
    verify_journal: "Verify its journal",
    verifying_a_journal: "Verifying a journal",
    z_reports: "Z reports",
    card_payments: "Card payments of the open session",
    no_card_payment: "No card payment attempt in the open session.",
    seeing_card_payments: "Seeing the card payments",
    payment: "Payment",
    asked_at: "Asked at",
    terminal: "Terminal",
    card: "Card",
    payment_state: |state| match state {
        PaymentState::Requested => "asked, no answer yet",
        PaymentState::Authorized => "approved",
        PaymentState::PartiallyAuthorized => "partly approved",
        PaymentState::Declined => "declined",
        PaymentState::Cancelled => "cancelled",
        PaymentState::Unknown => "answer lost",
        PaymentState::Captured => "taken by a sale",
        PaymentState::Voided => "voided",
        PaymentState::Orphaned => "orphan: to give back",
        PaymentState::Refunded => "refunded",
    },
    closed: "Closed",
    cashier: "Cashier",
    journal_holds: |register| format!("The journal of {register} holds"),
    journal_broken: |register| format!("The journal of {register} does not hold"),
    chain: "Chain",
    entries: "Entries",
    broken: "broken",
    verified: "verified",
    not_reached: "not reached",
    first_failure: "First failure",
    entry: "entry",

    sales: "Sales",
    customer: "Customer",
    kind: "Type",
    any: "Any",
    ticket: "Ticket",
    seller: "Seller",
    no_sale_matches: "No sale matches.",
    older_sales: "Older sales",
    transaction: "Transaction",
    ticket_of_chain: |seq| format!("ticket {seq} of its chain"),
    receipt: "Receipt",
    printed_original: "Print 1 recorded: the original. ",
    printed_duplicata: |print, number| {
        format!("Print {print} recorded: DUPLICATA {number}, sealed in the register's journal. ")
    },
    print_for_customer: "Print this page for the customer.",
    receipt_shown: "As the printer lays it out; viewing it here prints nothing.",
    print: "Print",
    print_duplicata: "Print a DUPLICATA",
    emails: "E-mails",
    email_queued: "The receipt is queued for e-mail; it leaves in a moment.",
    email_queued_at: "Asked",
    email_to: "To",
    email_state: "State",
    email_attempts: "Attempts",
    email_address: "Address (left empty: the customer's, if they asked for e-receipts)",
    send_by_email: "Send by e-mail",
    back_to_sales: "Back to the sales",
    invoices: "Invoices",
    invoice_kind: "Invoice",
    credit_invoice: "Credit invoice",
    invoice_issued_on: "Issued on",
    invoice_buyer: "Buyer",
    invoice_total: "Total incl. VAT",
    invoice_pdf: "PDF (Factur-X)",
    invoice_issued: "The invoice is issued.",
    issue_invoice: "Issue an invoice",
    issue_credit_invoice: "Issue a credit invoice",
    buyer_name: "Company name",
    buyer_siren: "SIREN (optional)",
    buyer_vat_number: "VAT number (optional)",
    buyer_line1: "Address",
    buyer_line2: "Address, second line (optional)",
    buyer_postal_code: "Postal code",
    buyer_city: "City",
    buyer_country: "Country (ISO code)",

    promotions: "Promotions",
    rule: "Rule",
    valid: "Valid",
    priority: "Priority",
    exclusive: "exclusive",
    active: "active",
    inactive: "inactive",
    deactivate: "Deactivate",
    deactivating_a_rule: "Deactivating a rule",
    no_rule: "No promotion rule yet.",
    zone_note: |zone| format!("times in {zone}"),
    deactivate_title: "Deactivate this promotion?",
    deactivate_text: |name, id| {
        html! {
            "The rule " strong { (name) } " (" code { (id) } ") will stop applying to new sales at "
            "every till, from now on. Sales already made keep it."
        }
    },
    deactivate_confirm: "Yes, deactivate it",
    already_inactive: "This rule is already inactive: there is nothing to deactivate.",

    stored_value_title: "Gift cards and credit notes",
    code_label: "Gift card or credit note code",
    look_up: "Look up",
    no_such_code: "No gift card or credit note with this code.",
    number: "Number",
    balance: "Balance",
    issued: "Issued",
    expires: "Expires",
    never: "never",
    ledger: "Ledger, oldest first",
    what: "What",
    balance_after: "Balance after",
    sale: "Sale",

    stock: "Stock",
    article_query: "Article name or barcode",
    no_article: "No article found.",
    on_hand: "On hand",
    latest_movements: "Latest movements",
    latest_movements_in: |store| format!("Latest movements in {store}"),
    no_movement: "No movement.",
    reason: "Reason",
    units: "Units",
    reference: "Reference",

    customers: "Customers",
    customer_query: "Name, e-mail or phone",
    group: "Group",
    display_name: "Name",
    customer_id: "Id",
    email: "E-mail",
    phone: "Phone",
    loyalty_points: "Loyalty points",
    last_activity: "Last activity",
    no_customer: "No customer found.",
    more_customers: "Next customers",
    postal_code: "Postal code",
    birth_date: "Birth date",
    groups: "Groups",
    one_per_line: "(one a line)",
    notes: "Notes",
    consent: "Consent",
    consent_state: "Now",
    source: "Source",
    consent_history: "Consent history, oldest first",
    no_consent_change: "No consent given or withdrawn yet.",
    created: "Created",
    updated: "Updated",
    erased_at: "Erased",
    was_erased: |at| {
        format!("This customer's personal data was erased on {at}: only the bare id and the sales that name it remain.")
    },
    export_customer: "Export everything held (JSON)",
    erase: "Erase…",
    back_to_customers: "Back to the customers",
    back_to_customer: "Back to the customer",
    exporting_a_customer: "Exporting what is held on a customer",
    erasing_a_customer: "Erasing a customer",
    editing_a_profile: "Editing the profile",
    personal_id: "This customer's id is itself an e-mail address or a phone number: the profile cannot be written under it.",
    edit_profile: "Edit the profile",
    nothing_saved: "Nothing was saved: correct the fields marked below.",
    save: "Save",
    erase_title: "Erase this customer?",
    erase_intro: |name, id| {
        html! {
            "Erasing " @if let Some(name) = name { strong { (name) } " (" code { (id) } ")" } @else { code { (id) } }
            " deletes for good:"
        }
    },
    erase_profile: "the profile: name, e-mail, phone, postal code, birth date, groups, notes and consent flags;",
    erase_consent: |changes| match changes {
        1 => "the consent history (1 change);".to_owned(),
        n => format!("the consent history ({n} changes);"),
    },
    erase_points: |points| match points {
        1 => "the 1 loyalty point left, forfeited.".to_owned(),
        n => format!("the {n} loyalty points left, forfeited."),
    },
    erase_sales_keep: |id| {
        html! {
            "Sales and returns keep the bare id " code { (id) } ", and the fiscal journal verifies as before."
        }
    },
    erase_for_good: "This cannot be undone.",
    erase_confirm: "Yes, erase for good",
};

pub const FRENCH: Words = Words {
    console: "console till",
    pages: "Pages",
    language: "Langue",
    sign_in: "Se connecter",
    sign_out: "Se déconnecter",
    signed_in_as: "Connecté en tant que",
    nav_today: "Aujourd’hui",
    nav_registers: "Caisses",
    nav_sales: "Ventes",
    nav_promotions: "Promotions",
    nav_stored_value: "Cartes cadeaux et avoirs",
    nav_stock: "Stock",
    nav_customers: "Clients",

    store: "Magasin",
    every_store: "Tous les magasins",
    every_store_lower: "tous les magasins",
    customer_groups: "pour les groupes de clients",
    day: "Jour",
    show: "Afficher",
    search: "Rechercher",
    cancel: "Annuler",
    when: "Date",
    total: "Total",
    amount: "Montant",
    state: "État",
    stores: "Magasins",
    none: "—",
    colon: "\u{a0}: ",

    sign_in_intro: || {
        html! {
            "Collez un jeton de back-office (la démo en affiche un : " code { "TILL_TOKEN" } "). "
            "Il est gardé dans un cookie que ce navigateur n’envoie qu’à la console."
        }
    },
    token: "Jeton",
    token_required: "Le jeton est obligatoire.",
    token_malformed: "Ce texte n’est pas un jeton de back-office tel qu’émis, comme le TILL_TOKEN de la démo.",
    token_refused: Some(
        "Ce jeton n’est pas valide : il a expiré, il a été révoqué, ou il n’a pas été émis pour ce serveur.",
    ),
    token_signed_out: "Ce jeton a été déconnecté de la console ; connectez-vous avec un nouveau jeton.",
    token_not_kept: "Ce jeton ne peut pas être gardé dans un cookie.",

    not_allowed: "Accès refusé",
    lacks_scope: |scopes| {
        html! {
            "Votre jeton n’a pas le droit " code { (scopes) } ", nécessaire pour cette page. "
            "Demandez un jeton qui l’a, puis connectez-vous à nouveau."
        }
    },
    form_refused: "Formulaire refusé",
    form_refused_text: "Ce formulaire était périmé ou venait d’un autre site : rien n’a été modifié. \
                        Revenez en arrière, rechargez la page et recommencez.",
    no_such_page: "Cette page n’existe pas dans la console.",
    bad_request: "Demande invalide",
    not_found: "Introuvable",
    refused: "Refusé",
    unavailable: "Service indisponible",
    failed: "Une erreur est survenue",
    too_large: "Trop volumineux",
    bad_request_text: Some("La demande n’a pas pu être lue. Détail (en anglais) :"),
    not_found_text: Some("Ce qui est demandé n’existe pas. Détail (en anglais) :"),
    refused_text: Some("Le serveur a refusé cette opération. Détail (en anglais) :"),
    unavailable_text: "La base de données est injoignable pour le moment. Réessayez dans un instant.",
    failed_text: "La page n’a pas pu être produite. L’erreur est dans le journal du serveur.",
    needs_scope_note: |what, scope| html! { (what) " demande le droit " code { (scope) } "." },

    sales_count: "Ventes",
    revenue: "Chiffre d’affaires",
    average_basket: "Panier moyen",
    returns: "Retours",
    items: "Articles",
    sales_per_hour: "Ventes par heure",
    hour_bar: |hour, sales, amount| {
        let noun = if sales > 1 { "ventes" } else { "vente" };
        format!(
            "{hour:02} h – {:02} h : {sales} {noun}, {amount}",
            hour.saturating_add(1)
        )
    },
    tenders: "Moyens de paiement",
    method: "Moyen",
    tickets: "Tickets",
    no_sales_this_day: "Aucune vente ce jour-là.",
    vat: "TVA",
    rate: "Taux",
    base: "Base HT",
    total_with_vat: "Total TTC",

    registers: "Caisses",
    no_register: "Aucune caisse de ce magasin n’a encore ouvert de session.",
    register: "Caisse",
    open_session: |session, cashier, since, float| {
        html! { "Session " (session) " ouverte par " (cashier) " depuis le " (since) ", fond de caisse " (float) "." }
    },
    no_session_open: "Aucune session ouverte.",
    day_closed: |day| {
        format!("La journée du {day} est clôturée : aucune session ne s’ouvre sur cette caisse avant demain.")
    },
    period_closed: |day, through| {
        format!(
            "La journée du {day} est clôturée, avec la période jusqu’au {through} : aucune session \
             ne s’ouvre sur cette caisse avant la fin de cette période."
        )
    },
    verify_journal: "Vérifier son journal",
    verifying_a_journal: "Vérifier un journal",
    z_reports: "Rapports Z",
    card_payments: "Paiements par carte de la session ouverte",
    no_card_payment: "Aucune demande de paiement par carte dans la session ouverte.",
    seeing_card_payments: "Voir les paiements par carte",
    payment: "Paiement",
    asked_at: "Demandé le",
    terminal: "Terminal",
    card: "Carte",
    payment_state: |state| match state {
        PaymentState::Requested => "demandé, sans réponse",
        PaymentState::Authorized => "accepté",
        PaymentState::PartiallyAuthorized => "accepté en partie",
        PaymentState::Declined => "refusé",
        PaymentState::Cancelled => "annulé",
        PaymentState::Unknown => "réponse perdue",
        PaymentState::Captured => "pris par une vente",
        PaymentState::Voided => "annulé au terminal",
        PaymentState::Orphaned => "orphelin : à rendre",
        PaymentState::Refunded => "remboursé",
    },
    closed: "Clôturée le",
    cashier: "Caissier",
    journal_holds: |register| format!("Le journal de {register} est intègre"),
    journal_broken: |register| format!("Le journal de {register} n’est pas intègre"),
    chain: "Chaîne",
    entries: "Entrées",
    broken: "rompue",
    verified: "vérifiée",
    not_reached: "non atteinte",
    first_failure: "Premier défaut",
    entry: "entrée",

    sales: "Ventes",
    customer: "Client",
    kind: "Type",
    any: "Tous",
    ticket: "Ticket",
    seller: "Vendeur",
    no_sale_matches: "Aucune vente ne correspond.",
    older_sales: "Ventes plus anciennes",
    transaction: "Transaction",
    ticket_of_chain: |seq| format!("ticket {seq} de sa chaîne"),
    receipt: "Ticket de caisse",
    printed_original: "Impression 1 enregistrée : l’original. ",
    printed_duplicata: |print, number| {
        format!("Impression {print} enregistrée : DUPLICATA {number}, scellé dans le journal de la caisse. ")
    },
    print_for_customer: "Imprimez cette page pour le client.",
    receipt_shown: "Tel que l’imprimante le met en page ; le consulter ici n’imprime rien.",
    print: "Imprimer",
    print_duplicata: "Imprimer un DUPLICATA",
    emails: "E-mails",
    email_queued: "Le ticket part par e-mail dans un instant.",
    email_queued_at: "Demandé",
    email_to: "Destinataire",
    email_state: "État",
    email_attempts: "Tentatives",
    email_address: "Adresse (vide : celle du client, s’il a demandé les tickets par e-mail)",
    send_by_email: "Envoyer par e-mail",
    back_to_sales: "Retour aux ventes",
    invoices: "Factures",
    invoice_kind: "Facture",
    credit_invoice: "Facture d’avoir",
    invoice_issued_on: "Émise le",
    invoice_buyer: "Acheteur",
    invoice_total: "Total TTC",
    invoice_pdf: "PDF (Factur-X)",
    invoice_issued: "La facture est émise.",
    issue_invoice: "Émettre une facture",
    issue_credit_invoice: "Émettre une facture d’avoir",
    buyer_name: "Raison sociale",
    buyer_siren: "SIREN (facultatif)",
    buyer_vat_number: "N° de TVA (facultatif)",
    buyer_line1: "Adresse",
    buyer_line2: "Complément d’adresse (facultatif)",
    buyer_postal_code: "Code postal",
    buyer_city: "Ville",
    buyer_country: "Pays (code ISO)",

    promotions: "Promotions",
    rule: "Règle",
    valid: "Validité",
    priority: "Priorité",
    exclusive: "exclusive",
    active: "active",
    inactive: "inactive",
    deactivate: "Désactiver",
    deactivating_a_rule: "Désactiver une règle",
    no_rule: "Aucune règle de promotion pour l’instant.",
    zone_note: |zone| format!("heures de {zone}"),
    deactivate_title: "Désactiver cette promotion\u{202f}?",
    deactivate_text: |name, id| {
        html! {
            "La règle " strong { (name) } " (" code { (id) } ") cessera de s’appliquer aux nouvelles "
            "ventes, à toutes les caisses, dès maintenant. Les ventes déjà faites la gardent."
        }
    },
    deactivate_confirm: "Oui, la désactiver",
    already_inactive: "Cette règle est déjà inactive : il n’y a rien à désactiver.",

    stored_value_title: "Cartes cadeaux et avoirs",
    code_label: "Code de la carte cadeau ou de l’avoir",
    look_up: "Rechercher",
    no_such_code: "Aucune carte cadeau ni aucun avoir n’a ce code.",
    number: "Numéro",
    balance: "Solde",
    issued: "Émis le",
    expires: "Expire le",
    never: "jamais",
    ledger: "Mouvements, du plus ancien au plus récent",
    what: "Opération",
    balance_after: "Solde après",
    sale: "Vente",

    stock: "Stock",
    article_query: "Nom ou code-barres de l’article",
    no_article: "Aucun article trouvé.",
    on_hand: "En stock",
    latest_movements: "Derniers mouvements",
    latest_movements_in: |store| format!("Derniers mouvements à {store}"),
    no_movement: "Aucun mouvement.",
    reason: "Motif",
    units: "Unités",
    reference: "Référence",

    customers: "Clients",
    customer_query: "Nom, e-mail ou téléphone",
    group: "Groupe",
    display_name: "Nom",
    customer_id: "Identifiant",
    email: "E-mail",
    phone: "Téléphone",
    loyalty_points: "Points de fidélité",
    last_activity: "Dernière activité",
    no_customer: "Aucun client trouvé.",
    more_customers: "Clients suivants",
    postal_code: "Code postal",
    birth_date: "Date de naissance",
    groups: "Groupes",
    one_per_line: "(un par ligne)",
    notes: "Notes",
    consent: "Consentements",
    consent_state: "Valeur",
    source: "Source",
    consent_history: "Historique des consentements, du plus ancien au plus récent",
    no_consent_change: "Aucun consentement donné ni retiré pour l’instant.",
    created: "Créé le",
    updated: "Modifié le",
    erased_at: "Effacé le",
    was_erased: |at| {
        format!(
            "Les données personnelles de ce client ont été effacées le {at} : il ne reste que l’identifiant et les ventes qui le citent."
        )
    },
    export_customer: "Exporter tout ce qui est conservé (JSON)",
    erase: "Effacer…",
    back_to_customers: "Retour aux clients",
    back_to_customer: "Retour au client",
    exporting_a_customer: "Exporter ce qui est conservé sur un client",
    erasing_a_customer: "Effacer un client",
    editing_a_profile: "Modifier le profil",
    personal_id: "L’identifiant de ce client est lui-même une adresse e-mail ou un numéro de téléphone : aucun profil ne peut être écrit sous cet identifiant.",
    edit_profile: "Modifier le profil",
    nothing_saved: "Rien n’a été enregistré : corrigez les champs signalés ci-dessous.",
    save: "Enregistrer",
    erase_title: "Effacer ce client\u{202f}?",
    erase_intro: |name, id| {
        html! {
            "Effacer " @if let Some(name) = name { strong { (name) } " (" code { (id) } ")" } @else { code { (id) } }
            " supprime définitivement\u{a0}:"
        }
    },
    erase_profile: "le profil : nom, e-mail, téléphone, code postal, date de naissance, groupes, notes et consentements ;",
    erase_consent: |changes| match changes {
        0 | 1 => format!("l’historique des consentements ({changes} changement) ;"),
        n => format!("l’historique des consentements ({n} changements) ;"),
    },
    erase_points: |points| match points {
        0 | 1 => format!("le solde de {points} point de fidélité, perdu."),
        n => format!("le solde de {n} points de fidélité, perdus."),
    },
    erase_sales_keep: |id| {
        html! {
            "Les ventes et les retours gardent l’identifiant seul " code { (id) } ", et le journal fiscal se vérifie comme avant."
        }
    },
    erase_for_good: "Cette opération est irréversible.",
    erase_confirm: "Oui, effacer définitivement",
};

impl Language {
    /// The words of this language.
    pub fn words(self) -> &'static Words {
        match self {
            Language::French => &FRENCH,
            Language::English => &ENGLISH,
        }
    }

    /// A tender method by its name in the API (`gift_card`); a method this build does not
    /// know as it is.
    pub fn method(self, name: &str) -> Cow<'static, str> {
        let Some(method) = TenderMethod::parse(name) else {
            return Cow::Owned(name.to_owned());
        };
        Cow::Borrowed(match (self, method) {
            (Language::French, TenderMethod::Card) => "Carte bancaire",
            (Language::French, TenderMethod::Cash) => "Espèces",
            (Language::French, TenderMethod::Cheque) => "Chèque",
            (Language::French, TenderMethod::MealVoucher) => "Titre-restaurant",
            (Language::French, TenderMethod::GiftCard) => "Carte cadeau",
            (Language::French, TenderMethod::CreditNote) => "Avoir",
            (Language::French, TenderMethod::Loyalty) => "Points de fidélité",
            (Language::French, TenderMethod::Installment) => "Paiement échelonné",
            (Language::English, TenderMethod::Card) => "Card",
            (Language::English, TenderMethod::Cash) => "Cash",
            (Language::English, TenderMethod::Cheque) => "Cheque",
            (Language::English, TenderMethod::MealVoucher) => "Meal voucher",
            (Language::English, TenderMethod::GiftCard) => "Gift card",
            (Language::English, TenderMethod::CreditNote) => "Credit note",
            (Language::English, TenderMethod::Loyalty) => "Loyalty points",
            (Language::English, TenderMethod::Installment) => "Instalments",
        })
    }

    pub fn sale_type(self, kind: SaleType) -> &'static str {
        match (self, kind) {
            (Language::French, SaleType::Sale) => "Vente",
            (Language::French, SaleType::Rental) => "Location",
            (Language::French, SaleType::Repair) => "Réparation",
            (Language::French, SaleType::Return) => "Retour",
            (Language::English, SaleType::Sale) => "Sale",
            (Language::English, SaleType::Rental) => "Rental",
            (Language::English, SaleType::Repair) => "Repair",
            (Language::English, SaleType::Return) => "Return",
        }
    }

    /// Where a receipt's e-mail stands.
    pub fn send_state_named(self, state: SendState) -> &'static str {
        match (self, state) {
            (Language::French, SendState::Queued) => "En attente",
            (Language::French, SendState::Sent) => "Envoyé",
            (Language::French, SendState::Failed) => "Abandonné",
            (Language::English, SendState::Queued) => "Waiting",
            (Language::English, SendState::Sent) => "Sent",
            (Language::English, SendState::Failed) => "Given up",
        }
    }

    /// Whom a receipt's e-mail went to, once its address is gone.
    pub fn recipient_named(self, recipient: RecipientKind) -> &'static str {
        match (self, recipient) {
            (Language::French, RecipientKind::Customer) => "Le client",
            (Language::French, RecipientKind::Address) => "Une adresse donnée",
            (Language::English, RecipientKind::Customer) => "The customer",
            (Language::English, RecipientKind::Address) => "An address given",
        }
    }

    /// A sale's type as the sale record spells it; a type this build does not know as it is.
    pub fn sale_type_named(self, name: &str) -> Cow<'static, str> {
        SaleType::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .map_or_else(
                || Cow::Owned(name.to_owned()),
                |kind| Cow::Borrowed(self.sale_type(kind)),
            )
    }

    pub fn stock_reason(self, reason: StockReason) -> &'static str {
        match (self, reason) {
            (Language::French, StockReason::Sale) => "Vente",
            (Language::French, StockReason::Return) => "Retour",
            (Language::French, StockReason::Count) => "Inventaire",
            (Language::French, StockReason::TransferOut) => "Transfert sortant",
            (Language::French, StockReason::TransferIn) => "Transfert entrant",
            (Language::French, StockReason::Adjustment) => "Ajustement",
            (Language::English, StockReason::Sale) => "Sale",
            (Language::English, StockReason::Return) => "Return",
            (Language::English, StockReason::Count) => "Count",
            (Language::English, StockReason::TransferOut) => "Transfer out",
            (Language::English, StockReason::TransferIn) => "Transfer in",
            (Language::English, StockReason::Adjustment) => "Adjustment",
        }
    }

    pub fn activity(self, kind: ActivityKind) -> &'static str {
        match (self, kind) {
            (Language::French, ActivityKind::Issue) => "Émission",
            (Language::French, ActivityKind::Activate) => "Activation",
            (Language::French, ActivityKind::Load) => "Rechargement",
            (Language::French, ActivityKind::Redeem) => "Paiement",
            (Language::French, ActivityKind::Refund) => "Remboursement",
            (Language::French, ActivityKind::Adjust) => "Ajustement",
            (Language::French, ActivityKind::Expire) => "Expiration",
            (Language::French, ActivityKind::Block) => "Blocage",
            (Language::French, ActivityKind::Unblock) => "Déblocage",
            (Language::English, ActivityKind::Issue) => "Issued",
            (Language::English, ActivityKind::Activate) => "Activated",
            (Language::English, ActivityKind::Load) => "Loaded",
            (Language::English, ActivityKind::Redeem) => "Redeemed",
            (Language::English, ActivityKind::Refund) => "Refunded",
            (Language::English, ActivityKind::Adjust) => "Adjusted",
            (Language::English, ActivityKind::Expire) => "Expired",
            (Language::English, ActivityKind::Block) => "Blocked",
            (Language::English, ActivityKind::Unblock) => "Unblocked",
        }
    }

    pub fn instrument(self, kind: InstrumentKind) -> &'static str {
        match (self, kind) {
            (Language::French, InstrumentKind::GiftCard) => "Carte cadeau",
            (Language::French, InstrumentKind::CreditNote) => "Avoir",
            (Language::English, InstrumentKind::GiftCard) => "Gift card",
            (Language::English, InstrumentKind::CreditNote) => "Credit note",
        }
    }

    /// The state of a gift card (feminine in French) or a credit note (masculine).
    pub fn instrument_state(self, kind: InstrumentKind, state: InstrumentState) -> &'static str {
        let card = kind == InstrumentKind::GiftCard;
        match (self, state) {
            (Language::French, InstrumentState::Active) => "utilisable",
            (Language::French, InstrumentState::Exhausted) => "solde épuisé",
            (Language::French, InstrumentState::Expired) if card => "expirée",
            (Language::French, InstrumentState::Expired) => "expiré",
            (Language::French, InstrumentState::Blocked) if card => "bloquée",
            (Language::French, InstrumentState::Blocked) => "bloqué",
            (Language::English, InstrumentState::Active) => "active",
            (Language::English, InstrumentState::Exhausted) => "spent",
            (Language::English, InstrumentState::Expired) => "expired",
            (Language::English, InstrumentState::Blocked) => "blocked",
        }
    }

    /// A chain of a register's journal (`ticket`, `closure`, ...); one this build does not know
    /// as it is.
    pub fn chain(self, name: &str) -> Cow<'static, str> {
        let word = match (self, name) {
            (Language::French, "ticket") => "tickets",
            (Language::French, "closure") => "clôtures",
            (Language::French, "duplicate") => "duplicatas",
            (Language::French, "event") => "événements",
            (Language::French, "archive") => "archives",
            (Language::English, "ticket") => "tickets",
            (Language::English, "closure") => "closures",
            (Language::English, "duplicate") => "duplicates",
            (Language::English, "event") => "events",
            (Language::English, "archive") => "archives",
            _ => return Cow::Owned(name.to_owned()),
        };
        Cow::Borrowed(word)
    }

    /// How a promotion rule's mechanics are called.
    pub fn mechanics(self, mechanics: &till_core::promotions::Mechanics) -> &'static str {
        use till_core::promotions::Mechanics;
        match (self, mechanics) {
            (Language::French, Mechanics::Bogo { .. }) => "achetés, offerts",
            (Language::French, Mechanics::Bundle { .. }) => "lot",
            (Language::French, Mechanics::PercentOff { .. }) => "remise en pourcentage",
            (Language::English, Mechanics::Bogo { .. }) => "buy some, get some",
            (Language::English, Mechanics::Bundle { .. }) => "bundle",
            (Language::English, Mechanics::PercentOff { .. }) => "percent off",
        }
    }

    pub fn consent_flag(self, flag: ConsentFlag) -> &'static str {
        match (self, flag) {
            (Language::French, ConsentFlag::MarketingEmail) => "Offres par e-mail",
            (Language::French, ConsentFlag::MarketingSms) => "Offres par SMS",
            (Language::French, ConsentFlag::EReceipt) => "Ticket par e-mail",
            (Language::English, ConsentFlag::MarketingEmail) => "Offers by e-mail",
            (Language::English, ConsentFlag::MarketingSms) => "Offers by SMS",
            (Language::English, ConsentFlag::EReceipt) => "Receipts by e-mail",
        }
    }

    /// A consent flag's value: given or withdrawn.
    pub fn consent_value(self, granted: bool) -> &'static str {
        match (self, granted) {
            (Language::French, true) => "donné",
            (Language::French, false) => "retiré",
            (Language::English, true) => "given",
            (Language::English, false) => "withdrawn",
        }
    }

    /// Where a consent change was made.
    pub fn consent_source(self, source: ConsentSource) -> &'static str {
        match (self, source) {
            (Language::French, ConsentSource::Till) => "caisse",
            (Language::French, ConsentSource::Console) => "console",
            (Language::French, ConsentSource::Api) => "API",
            (Language::English, ConsentSource::Till) => "till",
            (Language::English, ConsentSource::Console) => "console",
            (Language::English, ConsentSource::Api) => "API",
        }
    }

    /// What is wrong with a field of the profile form.
    pub fn profile_problem(self, problem: Problem) -> String {
        match (self, problem) {
            (Language::French, Problem::TooLong(max)) => format!("{max} caractères au plus."),
            (Language::French, Problem::ControlCharacters) => {
                "Ne doit pas contenir de caractère de contrôle.".to_owned()
            }
            (Language::French, Problem::NotAnEmail) => {
                "Doit être une adresse e-mail avec un domaine, comme marie@example.fr.".to_owned()
            }
            (Language::French, Problem::NotAPhone) => {
                "Doit être un numéro de téléphone : français (06 12 34 56 78) ou international, commençant par + ou 00."
                    .to_owned()
            }
            (Language::French, Problem::NotADate) => "Doit être une date (AAAA-MM-JJ).".to_owned(),
            (Language::French, Problem::TooManyGroups(max)) => format!("{max} groupes au plus."),
            (Language::French, Problem::GroupTooLong(max)) => format!("Chaque groupe a {max} caractères au plus."),
            (Language::English, Problem::TooLong(max)) => format!("At most {max} characters."),
            (Language::English, Problem::ControlCharacters) => "Must not hold control characters.".to_owned(),
            (Language::English, Problem::NotAnEmail) => {
                "Must be an e-mail address with a domain, such as marie@example.fr.".to_owned()
            }
            (Language::English, Problem::NotAPhone) => {
                "Must be a phone number: a French one (06 12 34 56 78) or an international one starting with + or 00."
                    .to_owned()
            }
            (Language::English, Problem::NotADate) => "Must be a date (YYYY-MM-DD).".to_owned(),
            (Language::English, Problem::TooManyGroups(max)) => format!("At most {max} groups."),
            (Language::English, Problem::GroupTooLong(max)) => format!("Each group is at most {max} characters."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_a_proper_name_in_each_language() {
        for language in Language::ALL {
            for method in TenderMethod::ALL {
                let name = language.method(method.as_str());
                assert!(!name.contains('_'), "{language:?} {name}");
                assert_ne!(name, method.as_str(), "{language:?}");
            }
            assert_eq!(language.method("voucher_x"), "voucher_x");
        }
        assert_eq!(Language::French.method("gift_card"), "Carte cadeau");
        assert_eq!(Language::English.stock_reason(StockReason::TransferIn), "Transfer in");
        assert_eq!(
            Language::French.stock_reason(StockReason::TransferIn),
            "Transfert entrant"
        );
    }
}
