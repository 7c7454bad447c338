//! The two languages of the console and of the admin's messages: English and Simplified
//! Chinese, chosen per browser (the `jobwheel_lang` cookie, else the browser's `Accept-Language`).

use std::borrow::Cow;

use actix_web::http::header;
use actix_web::HttpRequest;

/// Name of the cookie that remembers a browser's language.
pub const LANG_COOKIE: &str = "jobwheel_lang";

/// A language of the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// The browser's choice: its cookie, else the first language it accepts that we have.
    pub fn of(req: &HttpRequest) -> Lang {
        if let Some(lang) = req.cookie(LANG_COOKIE).and_then(|c| Lang::parse(c.value())) {
            return lang;
        }
        let accepted = req
            .headers()
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        accepted
            .split(',')
            .filter_map(|part| Lang::parse(part.split(';').next().unwrap_or_default().trim()))
            .next()
            .unwrap_or(Lang::En)
    }

    fn parse(text: &str) -> Option<Lang> {
        let text = text.to_ascii_lowercase();
        if text == "en" || text.starts_with("en-") {
            Some(Lang::En)
        } else if text == "zh" || text.starts_with("zh-") {
            Some(Lang::Zh)
        } else {
            None
        }
    }

    /// The BCP 47 tag of the page (`<html lang>`).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// `message` (English, as the admin words it) in this language: English is returned as it
    /// is; a message the catalogue does not know stays English rather than being lost.
    pub fn message<'a>(self, message: &'a str) -> Cow<'a, str> {
        match self {
            Lang::En => Cow::Borrowed(message),
            Lang::Zh => super::messages::in_chinese(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_choice_wins() {
        use actix_web::cookie::Cookie;
        use actix_web::test::TestRequest;
        let zh = TestRequest::default()
            .insert_header((header::ACCEPT_LANGUAGE, "zh-CN,zh;q=0.9,en;q=0.8"))
            .to_http_request();
        assert_eq!(Lang::of(&zh), Lang::Zh);
        let cookie = TestRequest::default()
            .insert_header((header::ACCEPT_LANGUAGE, "zh-CN"))
            .cookie(Cookie::new(LANG_COOKIE, "en"))
            .to_http_request();
        assert_eq!(Lang::of(&cookie), Lang::En);
        let other = TestRequest::default()
            .insert_header((header::ACCEPT_LANGUAGE, "fr-FR,de"))
            .to_http_request();
        assert_eq!(Lang::of(&other), Lang::En);
    }
}
