//! Password hashing: argon2id with a random salt, stored in PHC format.
//!
//! XXL-JOB stores unsalted SHA-256 (MD5 before 3.2); a leaked table of those falls to a lookup.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::distributions::Alphanumeric;
use rand::Rng;

/// Stored in place of a hash for a user an administrator must give a password first (users
/// imported from XXL-JOB, whose unsalted hashes are not carried over). It is no PHC string, so
/// [`verify_password`] never matches it, and login says why instead of "wrong password".
pub const RESET_REQUIRED: &str = "!password-reset-required";

/// True when the stored value is [`RESET_REQUIRED`] rather than a hash.
pub fn reset_required(stored: &str) -> bool {
    stored == RESET_REQUIRED
}

/// Hashing failed (only on absurd inputs or a broken RNG).
#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct HashError(String);

/// Hashes a password with a fresh salt.
pub fn hash_password(password: &str) -> Result<String, HashError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError(e.to_string()))
}

/// True when `password` matches the stored hash; a malformed hash never matches.
pub fn verify_password(password: &str, stored: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A random alphanumeric secret of `len` characters (generated passwords, tokens).
pub fn random_secret(len: usize) -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_are_salted() {
        let a = hash_password("123456").unwrap();
        let b = hash_password("123456").unwrap();
        assert_ne!(a, b, "two hashes of one password must differ (salt)");
        assert!(a.starts_with("$argon2id$"));
        assert!(verify_password("123456", &a));
        assert!(!verify_password("1234567", &a));
        assert!(!verify_password("123456", "not-a-hash"));
        assert!(!verify_password(RESET_REQUIRED, RESET_REQUIRED));
        assert!(reset_required(RESET_REQUIRED) && !reset_required(&a));
    }

    #[test]
    fn secrets_have_the_asked_length() {
        let s = random_secret(20);
        assert_eq!(s.len(), 20);
        assert!(s.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
