//! The console's stylesheet, scripts and icon, compiled into the binary (no CDN, no npm at build
//! time: `assets/editor.js` is CodeMirror, bundled once by `scripts/build-editor.sh`).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

/// A hash of the assets (made by `build.rs`), in their URLs, so a browser never keeps a stale
/// copy.
pub const VERSION: &str = env!("JOBWHEEL_ASSETS_VERSION");

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
        "editor.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../assets/editor.js"),
    ),
    (
        "editor-licences.txt",
        "text/plain; charset=utf-8",
        include_bytes!("../../../assets/editor-licences.txt"),
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
