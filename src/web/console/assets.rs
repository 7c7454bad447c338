//! The console's stylesheet, script and icon, compiled into the binary (no CDN, no build step).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

/// A hash of the assets, in their URLs, so a browser never keeps a stale copy.
pub const VERSION: u64 = {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut a = 0;
    while a < ASSETS.len() {
        let bytes = ASSETS[a].2;
        let mut i = 0;
        while i < bytes.len() {
            hash = (hash ^ bytes[i] as u64).wrapping_mul(0x0100_0000_01b3);
            i += 1;
        }
        a += 1;
    }
    hash
};

/// `(name, content type, bytes)` of every asset.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "console.css",
        "text/css; charset=utf-8",
        include_bytes!("../../../assets/console.css"),
    ),
    (
        "console.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../assets/console.js"),
    ),
    (
        "workflows.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../assets/workflows.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../../../assets/favicon.svg"),
    ),
];

/// `GET /static/{file}`; a request with the current `?v=` may be cached for a year.
pub(super) async fn serve(req: HttpRequest, file: web::Path<String>) -> HttpResponse {
    let Some((_, kind, bytes)) = ASSETS.iter().find(|(name, _, _)| *name == file.as_str()) else {
        return HttpResponse::NotFound().body("no such asset");
    };
    let current = req.query_string() == format!("v={VERSION}");
    HttpResponse::Ok()
        .content_type(*kind)
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((
            header::CACHE_CONTROL,
            if current {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            },
        ))
        .body(*bytes)
}
