//! The admin's HTTP surface: health, and (as they land) the executor API, REST API and UI.

use actix_web::web;

use crate::store::Store;

mod health;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
}

/// Mounts every admin route on an actix-web app.
pub fn configure(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(state))
            .route("/healthz", web::get().to(health::healthz));
    }
}
