//! `GET /console/customers`: the customer search of `GET /v1/customers` (name words, an
//! e-mail address or a phone number in any form, a group), a page at a time;
//! `GET /console/customers/{customerId}`: a customer's profile, points and consent history, with
//! the form that replaces the profile as `putCustomer` does (`POST` to the same address, consent
//! changes kept with the source `console`); `GET .../export`: the JSON of `exportCustomer`;
//! `POST .../erase` asks first, then erases as `eraseCustomer` does.

use super::forms::Query;
use super::href::Href;
use super::layout::{self, Nav};
use super::refused::Refused;
use super::session::{FORM_TOKEN, Visitor, Write};
use super::today::zone_of;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::ops;
use crate::routes::customers::{CustomerExportView, CustomerList, CustomerPath, NewCustomerPath, not_found};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use std::collections::BTreeSet;
use till_app::customers::{CustomerExport, CustomerRecord, PutCustomer};
use till_core::customer::{
    Consent, ConsentFlag, ConsentSource, Email, MAX_GROUP_CHARS, MAX_GROUPS, MAX_NAME_CHARS, MAX_NOTES_CHARS,
    MAX_POSTAL_CODE_CHARS, Phone, Profile, id_is_personal,
};
use till_core::ids::CustomerId;

/// Refused unless the visitor may search the customers.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::ListCustomers>()
}

fn customer_href(id: &CustomerId) -> Href {
    Href::to("/console/customers").segment(id.as_str())
}

/// The search: the same query reading and the same use case as `GET /v1/customers`.
pub async fn search(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(list): Query<CustomerList>,
) -> Result<Markup, Refused> {
    allowed(&visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    let zone = zone_of(None);
    let found =
        till_app::customers::search(state.app(), &list.search, list.group.as_deref(), &list.paging.window()).await?;
    let (customers, next) = list
        .paging
        .page(found, |(key, _)| key.clone(), |(_, record)| record)
        .into_parts();
    let body = html! {
        h1 { (words.customers) }
        form.picker method="get" action="/console/customers" {
            span.field.wide {
                label for="q" { (words.customer_query) }
                input #q name="q" value=[list.q.as_deref()] maxlength="100";
            }
            span.field {
                label for="group" { (words.group) }
                input #group name="group" value=[list.group.as_deref()];
            }
            button type="submit" { (words.search) }
        }
        table #customers.wide {
            thead {
                tr {
                    th { (words.display_name) } th { (words.customer_id) } th { (words.email) } th { (words.phone) }
                    th.n { (words.loyalty_points) } th { (words.last_activity) }
                }
            }
            tbody {
                @for record in &customers {
                    tr data-customer=(record.customer_id.as_str()) data-points=(record.loyalty_points) {
                        td data-label=(words.display_name) {
                            a href=(customer_href(&record.customer_id)) {
                                (record.profile.display_name.as_deref().unwrap_or(record.customer_id.as_str()))
                            }
                        }
                        td data-label=(words.customer_id) { code { (record.customer_id.as_str()) } }
                        td data-label=(words.email) { (record.profile.email.as_ref().map_or(words.none, Email::as_str)) }
                        td data-label=(words.phone) { (record.profile.phone.as_ref().map_or(words.none, Phone::as_str)) }
                        td.n data-label=(words.loyalty_points) { (record.loyalty_points) }
                        td data-label=(words.last_activity) { (layout::local_time(record.last_activity_at, &zone, language)) }
                    }
                }
                @if customers.is_empty() {
                    tr.empty { td colspan="6" { (words.no_customer) } }
                }
            }
        }
        @if let Some(cursor) = next {
            p {
                a.next href=(Href::to("/console/customers")
                    .query_some("q", list.q.as_deref())
                    .query_some("group", list.group.as_deref())
                    .query("cursor", &cursor)) { (words.more_customers) }
            }
        }
    };
    Ok(layout::page(words.nav_customers, Nav::Customers, &visitor, body))
}

/// Everything held on the customer, or the API's 404.
async fn held(state: &AppState, id: &CustomerId) -> Result<CustomerExport, Refused> {
    Ok(till_app::customers::export(state.app(), id)
        .await?
        .ok_or_else(not_found)?)
}

pub async fn customer(
    visitor: Visitor,
    State(state): State<AppState>,
    path: Result<PathParams<CustomerPath>, ApiError>,
) -> Result<Markup, Refused> {
    visitor.require::<ops::GetCustomer>()?;
    let PathParams(CustomerPath(id)) = path?;
    let export = held(&state, &id).await?;
    let form = ProfileForm::of(&export.customer);
    Ok(customer_page(&visitor, &export, &form, &[]))
}

/// Replaces the profile through the use case `putCustomer` calls, then shows it again. A form
/// with a bad field is shown again with what was typed and each field's problem, and nothing
/// is written.
pub async fn edit(
    State(state): State<AppState>,
    path: Result<PathParams<NewCustomerPath>, ApiError>,
    write: Write<ProfileForm>,
) -> Result<Response, Refused> {
    let PathParams(NewCustomerPath(id)) = path?;
    let Write { visitor, form } = write;
    visitor.require::<ops::PutCustomer>()?;
    let export = held(&state, &id).await?;
    match form.check() {
        Err(problems) => Ok((
            StatusCode::BAD_REQUEST,
            customer_page(&visitor, &export, &form, &problems),
        )
            .into_response()),
        Ok((profile, consent)) => {
            let put = PutCustomer {
                customer_id: id.clone(),
                profile,
                consent: Some(consent),
                source: ConsentSource::Console,
            };
            till_app::customers::put(state.app(), put).await?;
            Ok(see(&customer_href(&id)))
        }
    }
}

/// `303 See Other` to `href`: the page after a form that wrote.
fn see(href: &Href) -> Response {
    let location =
        HeaderValue::from_str(href.as_str()).unwrap_or_else(|_| HeaderValue::from_static("/console/customers"));
    (StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response()
}

/// The JSON of `GET /v1/customers/{customerId}/export`, as a file to keep.
pub async fn export(
    visitor: Visitor,
    State(state): State<AppState>,
    path: Result<PathParams<CustomerPath>, ApiError>,
) -> Result<Response, Refused> {
    visitor.require::<ops::ExportCustomer>()?;
    let PathParams(CustomerPath(id)) = path?;
    let export = held(&state, &id).await?;
    // The file's name keeps the id's plain characters only: it goes into a header.
    let name: String = id
        .as_str()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"customer-{name}.json\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    Ok((
        [(CONTENT_DISPOSITION, disposition)],
        Json(CustomerExportView::from(export)),
    )
        .into_response())
}

/// The erase form: the page's button sends it without `confirm`, the confirmation's button
/// with `confirm=yes`.
pub struct EraseForm {
    confirmed: bool,
}

impl FromParams for EraseForm {
    fn from_params(params: &Params) -> Option<Self> {
        let confirm = params.optional("confirm", |text| match text {
            "yes" => Ok(()),
            _ => Err("must be yes"),
        })?;
        Some(EraseForm {
            confirmed: confirm.is_some(),
        })
    }
}

/// Asks first: the page's button shows what erasing loses, with a button that confirms. Only
/// the confirmed form erases, through the use case `eraseCustomer` calls; then the customer's
/// page is shown again, as erased.
pub async fn erase(
    State(state): State<AppState>,
    path: Result<PathParams<CustomerPath>, ApiError>,
    write: Write<EraseForm>,
) -> Result<Response, Refused> {
    let PathParams(CustomerPath(id)) = path?;
    let Write { visitor, form } = write;
    visitor.require::<ops::EraseCustomer>()?;
    if form.confirmed {
        till_app::customers::erase(state.app(), &id)
            .await?
            .ok_or_else(not_found)?;
        return Ok(see(&customer_href(&id)));
    }
    let export = held(&state, &id).await?;
    Ok(confirmation(&visitor, &export).into_response())
}

fn erase_href(id: &CustomerId) -> Href {
    customer_href(id).then("erase")
}

fn confirmation(visitor: &Visitor, export: &CustomerExport) -> Markup {
    let words = visitor.words();
    let language = visitor.language();
    let record = &export.customer;
    let id = &record.customer_id;
    let body = html! {
        h1 { (words.erase_title) }
        section.confirm #confirm data-customer=(id.as_str()) data-points=(record.loyalty_points) {
            @match record.erased_at {
                None => {
                    p { ((words.erase_intro)(record.profile.display_name.as_deref(), id.as_str())) }
                    ul #lost {
                        li { (words.erase_profile) }
                        li { ((words.erase_consent)(export.consent_history.len())) }
                        li #forfeited { ((words.erase_points)(record.loyalty_points)) }
                    }
                    p { ((words.erase_sales_keep)(id.as_str())) }
                    p.refusal { strong { (words.erase_for_good) } }
                    form.confirm method="post" action=(erase_href(id)) {
                        input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                        input type="hidden" name="confirm" value="yes";
                        button.danger type="submit" { (words.erase_confirm) }
                        a.cancel href=(customer_href(id)) { (words.cancel) }
                    }
                }
                Some(at) => {
                    p { ((words.was_erased)(&layout::local_time(at, &zone_of(None), language))) }
                    p { a href=(customer_href(id)) { (words.back_to_customer) } }
                }
            }
        }
    };
    layout::page(words.erase_title, Nav::Customers, visitor, body)
}

/// A field of the profile form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    DisplayName,
    Email,
    Phone,
    PostalCode,
    BirthDate,
    Groups,
    Notes,
}

impl Field {
    /// Its name in the form, the API's name for it.
    fn name(self) -> &'static str {
        match self {
            Field::DisplayName => "displayName",
            Field::Email => "email",
            Field::Phone => "phone",
            Field::PostalCode => "postalCode",
            Field::BirthDate => "birthDate",
            Field::Groups => "groups",
            Field::Notes => "notes",
        }
    }
}

/// What is wrong with a field, written in the page's language by
/// [`super::language::Language::profile_problem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    TooLong(usize),
    ControlCharacters,
    NotAnEmail,
    NotAPhone,
    NotADate,
    TooManyGroups(usize),
    GroupTooLong(usize),
}

/// The profile form as sent, each text as typed (blank fields left out), so that a form with a
/// bad field is shown again as it was.
pub struct ProfileForm {
    display_name: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    postal_code: Option<String>,
    birth_date: Option<String>,
    /// One group a line.
    groups: Option<String>,
    notes: Option<String>,
    consent: Consent,
}

impl FromParams for ProfileForm {
    fn from_params(params: &Params) -> Option<Self> {
        // Checked below with the API's rules, field by field, for the page to name each
        // problem in its language: a note may be long and hold line breaks.
        let text =
            |name: &str| params.optional_checked(name, |_| Ok::<(), &str>(()), |text| Ok::<_, &str>(text.to_owned()));
        let flag = |flag: ConsentFlag| {
            params.optional(flag.as_str(), |text| match text {
                "yes" => Ok(()),
                _ => Err("must be yes"),
            })
        };
        let display_name = text("displayName");
        let email = text("email");
        let phone = text("phone");
        let postal_code = text("postalCode");
        let birth_date = text("birthDate");
        let groups = text("groups");
        let notes = text("notes");
        let marketing_email = flag(ConsentFlag::MarketingEmail);
        let marketing_sms = flag(ConsentFlag::MarketingSms);
        let e_receipt = flag(ConsentFlag::EReceipt);
        Some(ProfileForm {
            display_name: display_name?,
            email: email?,
            phone: phone?,
            postal_code: postal_code?,
            birth_date: birth_date?,
            groups: groups?,
            notes: notes?,
            consent: Consent {
                marketing_email: marketing_email?.is_some(),
                marketing_sms: marketing_sms?.is_some(),
                e_receipt: e_receipt?.is_some(),
            },
        })
    }
}

/// A one-line text of at most `max` characters, without control characters, trimmed; `None`
/// when blank.
fn line(text: Option<&str>, max: usize) -> Result<Option<String>, Problem> {
    let Some(text) = text.map(str::trim).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > max {
        return Err(Problem::TooLong(max));
    }
    if text.chars().any(char::is_control) {
        return Err(Problem::ControlCharacters);
    }
    Ok(Some(text.to_owned()))
}

impl ProfileForm {
    /// The form filled with the profile held.
    fn of(record: &CustomerRecord) -> ProfileForm {
        let profile = &record.profile;
        let groups: Vec<&str> = profile.groups.iter().map(String::as_str).collect();
        ProfileForm {
            display_name: profile.display_name.clone(),
            email: profile.email.as_ref().map(|email| email.as_str().to_owned()),
            phone: profile.phone.as_ref().map(|phone| phone.as_str().to_owned()),
            postal_code: profile.postal_code.clone(),
            birth_date: profile.birth_date.map(|date| date.to_string()),
            groups: (!groups.is_empty()).then(|| groups.join("\n")),
            notes: profile.notes.clone(),
            consent: record.consent,
        }
    }

    fn value(&self, field: Field) -> Option<&str> {
        match field {
            Field::DisplayName => self.display_name.as_deref(),
            Field::Email => self.email.as_deref(),
            Field::Phone => self.phone.as_deref(),
            Field::PostalCode => self.postal_code.as_deref(),
            Field::BirthDate => self.birth_date.as_deref(),
            Field::Groups => self.groups.as_deref(),
            Field::Notes => self.notes.as_deref(),
        }
    }

    /// The profile and consent the form writes, under the rules of `PUT /v1/customers`; else
    /// every field's problem.
    fn check(&self) -> Result<(Profile, Consent), Vec<(Field, Problem)>> {
        let mut problems = Vec::new();
        let display_name = keep(
            &mut problems,
            Field::DisplayName,
            line(self.display_name.as_deref(), MAX_NAME_CHARS),
        );
        let email = keep(
            &mut problems,
            Field::Email,
            line(self.email.as_deref(), usize::MAX).and_then(|text| {
                text.map(|text| Email::parse(&text).ok_or(Problem::NotAnEmail))
                    .transpose()
            }),
        );
        let phone = keep(
            &mut problems,
            Field::Phone,
            line(self.phone.as_deref(), usize::MAX).and_then(|text| {
                text.map(|text| Phone::parse(&text).ok_or(Problem::NotAPhone))
                    .transpose()
            }),
        );
        let postal_code = keep(
            &mut problems,
            Field::PostalCode,
            line(self.postal_code.as_deref(), MAX_POSTAL_CODE_CHARS),
        );
        let birth_date = keep(
            &mut problems,
            Field::BirthDate,
            line(self.birth_date.as_deref(), usize::MAX).and_then(|text| {
                text.map(|text| text.parse::<jiff::civil::Date>().map_err(|_| Problem::NotADate))
                    .transpose()
            }),
        );
        let groups = keep(&mut problems, Field::Groups, group_lines(self.groups.as_deref()));
        let notes = keep(&mut problems, Field::Notes, notes_text(self.notes.as_deref()));
        match (display_name, email, phone, postal_code, birth_date, groups, notes) {
            (
                Some(display_name),
                Some(email),
                Some(phone),
                Some(postal_code),
                Some(birth_date),
                Some(groups),
                Some(notes),
            ) if problems.is_empty() => Ok((
                Profile {
                    display_name,
                    email,
                    phone,
                    postal_code,
                    birth_date,
                    groups,
                    notes,
                },
                self.consent,
            )),
            _ => Err(problems),
        }
    }
}

/// `checked`'s value, else `None` with its problem recorded against `field`.
fn keep<T>(problems: &mut Vec<(Field, Problem)>, field: Field, checked: Result<T, Problem>) -> Option<T> {
    match checked {
        Ok(value) => Some(value),
        Err(problem) => {
            problems.push((field, problem));
            None
        }
    }
}

/// One group a line, blank lines skipped.
fn group_lines(text: Option<&str>) -> Result<BTreeSet<String>, Problem> {
    let mut groups = BTreeSet::new();
    for name in text.unwrap_or_default().lines() {
        match line(Some(name), MAX_GROUP_CHARS) {
            Ok(Some(name)) => {
                groups.insert(name);
            }
            Ok(None) => {}
            Err(Problem::TooLong(max)) => return Err(Problem::GroupTooLong(max)),
            Err(problem) => return Err(problem),
        }
    }
    if groups.len() > MAX_GROUPS {
        return Err(Problem::TooManyGroups(MAX_GROUPS));
    }
    Ok(groups)
}

/// Notes: line breaks and tabs allowed, no other control character.
fn notes_text(text: Option<&str>) -> Result<Option<String>, Problem> {
    let Some(text) = text.filter(|text| !text.trim().is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > MAX_NOTES_CHARS {
        return Err(Problem::TooLong(MAX_NOTES_CHARS));
    }
    if text.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        return Err(Problem::ControlCharacters);
    }
    Ok(Some(text.to_owned()))
}

/// The customer's page: the profile, points and dates, the consent history, and what the
/// visitor may do (edit, export, erase). `form` is the edit form as shown, with `problems`.
fn customer_page(
    visitor: &Visitor,
    export: &CustomerExport,
    form: &ProfileForm,
    problems: &[(Field, Problem)],
) -> Markup {
    let words = visitor.words();
    let language = visitor.language();
    let zone = zone_of(None);
    let record = &export.customer;
    let id = &record.customer_id;
    let profile = &record.profile;
    let erased = record.erased_at.is_some();
    let may_edit = visitor.may::<ops::PutCustomer>();
    let may_export = visitor.may::<ops::ExportCustomer>();
    let may_erase = visitor.may::<ops::EraseCustomer>();
    let title = profile.display_name.clone().unwrap_or_else(|| id.as_str().to_owned());
    let text = |value: Option<&str>| value.unwrap_or(words.none).to_owned();
    let body = html! {
        h1 { (title) }
        @if let Some(at) = record.erased_at {
            p.refusal #erased { ((words.was_erased)(&layout::local_time(at, &zone, language))) }
        }
        dl.facts #profile data-customer=(id.as_str()) data-erased=(erased) data-points=(record.loyalty_points) {
            div { dt { (words.customer_id) } dd { code { (id.as_str()) } } }
            div { dt { (words.display_name) } dd #display-name { (text(profile.display_name.as_deref())) } }
            div { dt { (words.email) } dd #email { (text(profile.email.as_ref().map(Email::as_str))) } }
            div { dt { (words.phone) } dd #phone { (text(profile.phone.as_ref().map(Phone::as_str))) } }
            div { dt { (words.postal_code) } dd #postal-code { (text(profile.postal_code.as_deref())) } }
            div {
                dt { (words.birth_date) }
                dd #birth-date { (profile.birth_date.map_or(words.none.to_owned(), |day| layout::date(day, language))) }
            }
            div {
                dt { (words.groups) }
                dd #groups {
                    @if profile.groups.is_empty() { (words.none) }
                    @else { (profile.groups.iter().map(String::as_str).collect::<Vec<_>>().join(", ")) }
                }
            }
            div { dt { (words.loyalty_points) } dd #points { (record.loyalty_points) } }
            @for flag in ConsentFlag::ALL {
                div {
                    dt { (language.consent_flag(flag)) }
                    dd data-flag=(flag.as_str()) data-granted=(record.consent.get(flag)) {
                        (language.consent_value(record.consent.get(flag)))
                    }
                }
            }
            div { dt { (words.created) } dd { (layout::local_time(record.created_at, &zone, language)) } }
            div { dt { (words.updated) } dd { (layout::local_time(record.updated_at, &zone, language)) } }
            div { dt { (words.last_activity) } dd { (layout::local_time(record.last_activity_at, &zone, language)) } }
            div {
                dt { (words.erased_at) }
                dd #erased-at { (record.erased_at.map_or(words.none.to_owned(), |at| layout::local_time(at, &zone, language))) }
            }
        }
        @if let Some(notes) = &profile.notes {
            section #notes {
                h2 { (words.notes) }
                p.notes { (notes) }
            }
        }
        table #consent-history {
            caption { (words.consent_history) }
            thead { tr { th { (words.when) } th { (words.consent) } th { (words.consent_state) } th { (words.source) } } }
            tbody {
                @for change in &export.consent_history {
                    tr data-flag=(change.flag.as_str()) data-granted=(change.granted) data-source=(change.source.as_str()) {
                        td data-label=(words.when) { (layout::local_time(change.at, &zone, language)) }
                        td data-label=(words.consent) { (language.consent_flag(change.flag)) }
                        td data-label=(words.consent_state) { (language.consent_value(change.granted)) }
                        td data-label=(words.source) { (language.consent_source(change.source)) }
                    }
                }
                @if export.consent_history.is_empty() {
                    tr.empty { td colspan="4" { (words.no_consent_change) } }
                }
            }
        }
        div.actions {
            @if may_export {
                a.button #export href=(customer_href(id).then("export")) download { (words.export_customer) }
            }
            @if may_erase && !erased {
                form.inline method="post" action=(erase_href(id)) {
                    input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                    button.danger #erase type="submit" { (words.erase) }
                }
            }
            a.cancel href="/console/customers" { (words.back_to_customers) }
        }
        @if !may_export {
            p.note { ((words.needs_scope_note)(words.exporting_a_customer, "pos.customers.read")) }
        }
        @if !may_erase && !erased {
            p.note { ((words.needs_scope_note)(words.erasing_a_customer, "pos.customers.erase")) }
        }
        @if !erased && id_is_personal(id.as_str()) {
            p.note { (words.personal_id) }
        } @else if !erased && may_edit {
            (edit_form(visitor, id, form, problems))
        } @else if !erased {
            p.note { ((words.needs_scope_note)(words.editing_a_profile, "pos.customers.write")) }
        }
    };
    layout::page(&title, Nav::Customers, visitor, body)
}

fn edit_form(visitor: &Visitor, id: &CustomerId, form: &ProfileForm, problems: &[(Field, Problem)]) -> Markup {
    let words = visitor.words();
    let language = visitor.language();
    let problem = |field: Field| {
        problems
            .iter()
            .find(|(which, _)| *which == field)
            .map(|(_, problem)| language.profile_problem(*problem))
    };
    let text_input = |field: Field, label: &str, kind: &str, autocomplete: &str| {
        let name = field.name();
        let problem = problem(field);
        let described = format!("{name}-problem");
        // Ids of their own: the facts above already name `#email`, `#phone`.
        let id = format!("edit-{name}");
        html! {
            span.field {
                label for=(id) { (label) }
                input id=(id) name=(name) type=(kind) value=[form.value(field)] autocomplete=(autocomplete)
                    aria-invalid=[problem.is_some().then_some("true")]
                    aria-describedby=[problem.is_some().then_some(described.as_str())];
                @if let Some(problem) = &problem {
                    span.field-problem id=(described) data-field=(name) { (problem) }
                }
            }
        }
    };
    let area = |field: Field, label: &str, hint: Option<&str>| {
        let name = field.name();
        let problem = problem(field);
        let described = format!("{name}-problem");
        let id = format!("edit-{name}");
        html! {
            span.field.whole {
                label for=(id) { (label) @if let Some(hint) = hint { " " span.note { (hint) } } }
                textarea id=(id) name=(name) rows="3"
                    aria-invalid=[problem.is_some().then_some("true")]
                    aria-describedby=[problem.is_some().then_some(described.as_str())] { (form.value(field).unwrap_or_default()) }
                @if let Some(problem) = &problem {
                    span.field-problem id=(described) data-field=(name) { (problem) }
                }
            }
        }
    };
    html! {
        section #edit {
            h2 { (words.edit_profile) }
            form.profile method="post" action=(customer_href(id)) {
                input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                @if !problems.is_empty() {
                    p.refusal.problems role="alert" { (words.nothing_saved) }
                }
                (text_input(Field::DisplayName, words.display_name, "text", "off"))
                (text_input(Field::Email, words.email, "email", "off"))
                (text_input(Field::Phone, words.phone, "tel", "off"))
                (text_input(Field::PostalCode, words.postal_code, "text", "off"))
                (text_input(Field::BirthDate, words.birth_date, "date", "off"))
                (area(Field::Groups, words.groups, Some(words.one_per_line)))
                (area(Field::Notes, words.notes, None))
                fieldset {
                    legend { (words.consent) }
                    @for flag in ConsentFlag::ALL {
                        label {
                            input type="checkbox" name=(flag.as_str()) value="yes" checked[form.consent.get(flag)];
                            (language.consent_flag(flag))
                        }
                    }
                }
                button type="submit" { (words.save) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> ProfileForm {
        let pairs = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        super::super::forms::read(pairs).map_err(|_| "refused").unwrap()
    }

    #[test]
    fn the_form_checks_each_field_as_the_api_does() {
        let good = form(&[
            ("displayName", " Marie Martin "),
            ("email", "Marie@Example.fr"),
            ("phone", "06 12 34 56 78"),
            ("birthDate", "1990-05-17"),
            ("groups", "staff\r\n\r\nvip\n"),
            ("notes", "line one\r\nline two"),
            ("marketingSms", "yes"),
        ]);
        let (profile, consent) = good.check().unwrap();
        assert_eq!(profile.display_name.as_deref(), Some("Marie Martin"));
        assert_eq!(profile.email.unwrap().as_str(), "marie@example.fr");
        assert_eq!(profile.phone.unwrap().as_str(), "+33612345678");
        assert_eq!(profile.groups.into_iter().collect::<Vec<_>>(), ["staff", "vip"]);
        assert_eq!(profile.notes.as_deref(), Some("line one\r\nline two"));
        assert!(consent.marketing_sms && !consent.marketing_email && !consent.e_receipt);

        let bad = form(&[("email", "marie"), ("phone", "06 12"), ("birthDate", "1990-13-01")]);
        let problems = bad.check().unwrap_err();
        assert_eq!(
            problems,
            [
                (Field::Email, Problem::NotAnEmail),
                (Field::Phone, Problem::NotAPhone),
                (Field::BirthDate, Problem::NotADate)
            ]
        );
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(
            form(&[("displayName", &long)]).check().unwrap_err(),
            [(Field::DisplayName, Problem::TooLong(MAX_NAME_CHARS))]
        );
        assert_eq!(
            form(&[("notes", "a\u{7}b")]).check().unwrap_err(),
            [(Field::Notes, Problem::ControlCharacters)]
        );
        let many: Vec<String> = (0..=MAX_GROUPS).map(|n| format!("g{n}")).collect();
        assert_eq!(
            form(&[("groups", &many.join("\n"))]).check().unwrap_err(),
            [(Field::Groups, Problem::TooManyGroups(MAX_GROUPS))]
        );
    }
}
