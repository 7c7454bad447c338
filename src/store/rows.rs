//! Column access that reads the same on every backend's row type.

use sqlx::{ColumnIndex, Decode, Row, Type};

/// Typed column getters for any backend's row.
pub(crate) trait RowExt {
    /// An INT column.
    fn int(&self, col: &str) -> Result<i32, sqlx::Error>;
    /// A BIGINT column (times, log ids, counts).
    fn long(&self, col: &str) -> Result<i64, sqlx::Error>;
    /// A NOT NULL text column.
    fn text(&self, col: &str) -> Result<String, sqlx::Error>;
    /// A nullable text column.
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error>;
    /// A nullable INT column (the side of an outer join that found nothing).
    fn opt_int(&self, col: &str) -> Result<Option<i32>, sqlx::Error>;
    /// A nullable BIGINT column.
    fn opt_long(&self, col: &str) -> Result<Option<i64>, sqlx::Error>;
}

impl<R> RowExt for R
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    i32: Type<R::Database> + for<'r> Decode<'r, R::Database>,
    i64: Type<R::Database> + for<'r> Decode<'r, R::Database>,
    String: Type<R::Database> + for<'r> Decode<'r, R::Database>,
{
    fn int(&self, col: &str) -> Result<i32, sqlx::Error> {
        self.try_get(col)
    }
    fn long(&self, col: &str) -> Result<i64, sqlx::Error> {
        self.try_get(col)
    }
    fn text(&self, col: &str) -> Result<String, sqlx::Error> {
        self.try_get(col)
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error> {
        self.try_get(col)
    }
    fn opt_int(&self, col: &str) -> Result<Option<i32>, sqlx::Error> {
        self.try_get(col)
    }
    fn opt_long(&self, col: &str) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(col)
    }
}

/// A value bound into a statement built at run time (filters).
#[derive(Debug, Clone)]
pub(crate) enum Param {
    Int(i32),
    Long(i64),
    Text(String),
}

impl From<i32> for Param {
    fn from(v: i32) -> Self {
        Param::Int(v)
    }
}

impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Param::Long(v)
    }
}

/// Binds every [`Param`] in order onto a query of any backend.
macro_rules! bind_params {
    ($query:expr, $params:expr) => {{
        let mut q = $query;
        for p in $params.iter() {
            q = match p {
                $crate::store::rows::Param::Int(v) => q.bind(*v),
                $crate::store::rows::Param::Long(v) => q.bind(*v),
                $crate::store::rows::Param::Text(v) => q.bind(v.clone()),
            };
        }
        q
    }};
}
pub(crate) use bind_params;

/// A `LIKE` pattern matching `text` anywhere, with `!` escaping the wildcards (the same on every backend).
pub(crate) fn contains_pattern(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('%');
    for c in text.chars() {
        if matches!(c, '!' | '%' | '_') {
            out.push('!');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// A WHERE clause assembled from optional filters.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    conditions: Vec<String>,
    /// Values for the placeholders, in order.
    pub params: Vec<Param>,
}

impl Filter {
    /// Adds `condition` (with one `?`) bound to `value`.
    pub fn and(&mut self, condition: &str, value: Param) {
        self.conditions.push(condition.to_string());
        self.params.push(value);
    }

    /// Adds a condition without parameters.
    pub fn and_raw(&mut self, condition: &str) {
        self.conditions.push(condition.to_string());
    }

    /// Adds `column LIKE %text% ESCAPE '!'`.
    pub fn and_contains(&mut self, column: &str, text: &str) {
        self.and(
            &format!("{column} LIKE ? ESCAPE '!'"),
            Param::Text(contains_pattern(text)),
        );
    }

    /// ` WHERE a AND b`, or empty.
    pub fn where_clause(&self) -> String {
        if self.conditions.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.conditions.join(" AND "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(contains_pattern("a%b_c!"), "%a!%b!_c!!%");
    }

    #[test]
    fn filters_join_conditions() {
        let mut f = Filter::default();
        assert_eq!(f.where_clause(), "");
        f.and("a = ?", Param::Int(1));
        f.and_raw("b = 0");
        assert_eq!(f.where_clause(), " WHERE a = ? AND b = 0");
        assert_eq!(f.params.len(), 1);
    }
}
