//! The people who work the tills, as the back office provisions them: role, PIN, extra
//! permissions and discount limit. A write replaces the member whole and refreshes when their
//! grants were last synchronised; the PIN is kept only as its hash.

use crate::app::App;
use crate::refusal::{Error, Refusal};
use crate::secret::{hash_pin, pin_work};
use crate::storage::Window;
use crate::storage::people::PutStaff;
use till_core::ids::Subject;
use till_core::staff::{Pin, StaffMember};

pub use crate::storage::people::StaffRecord;

/// A member written: the record as stored, and whether it was created.
pub struct Written {
    pub record: StaffRecord,
    pub created: bool,
}

/// Creates or replaces the member `subject`. Without a `pin` the current one is kept, so a
/// member not yet known needs one.
pub async fn put_staff(app: &App, subject: Subject, member: StaffMember, pin: Option<Pin>) -> Result<Written, Error> {
    if pin.is_none() && app.people().get_staff(&subject).await?.is_none() {
        return Err(Refusal::NewStaffWithoutPin.into());
    }
    let pin_hash = match pin {
        Some(pin) => Some(pin_work(move || hash_pin(&pin)).await.map_err(Error::internal)?),
        None => None,
    };
    let put = PutStaff {
        subject,
        member,
        pin_hash,
    };
    let (record, created) = app.people().put_staff(put, app.now()).await?;
    Ok(Written { record, created })
}

pub async fn get_staff(app: &App, subject: &Subject) -> Result<Option<StaffRecord>, Error> {
    Ok(app.people().get_staff(subject).await?)
}

/// The staff by subject, in `window`.
pub async fn list_staff(app: &App, window: &Window<Subject>) -> Result<Vec<StaffRecord>, Error> {
    Ok(app.people().list_staff(window).await?)
}
