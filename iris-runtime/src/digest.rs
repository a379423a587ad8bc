//! Digests that bind a decision to what it decides: the hash of a call's
//! arguments (or a question set), whatever the order of their keys, and
//! digests written as hexadecimal.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 (hex) of `value` with object keys sorted, so equal arguments
/// hash equally whatever their key order.
#[must_use]
pub fn arguments_hash(value: &Value) -> String {
    let mut hasher = Sha256::new();
    hash_canonical(value, &mut hasher);
    hex(&hasher.finalize())
}

/// `digest` as lowercase hexadecimal.
#[must_use]
pub fn hex(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(digest.len() * 2);
    for &byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hash_canonical(value: &Value, hasher: &mut Sha256) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hasher.update(b"{");
            for key in keys {
                hash_canonical(&Value::String(key.clone()), hasher);
                hasher.update(b":");
                hash_canonical(&map[key.as_str()], hasher);
                hasher.update(b",");
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for item in items {
                hash_canonical(item, hasher);
                hasher.update(b",");
            }
            hasher.update(b"]");
        }
        scalar => hasher.update(scalar.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hash_ignores_key_order_but_not_values() {
        let a = arguments_hash(&json!({"a": 1, "b": [1, {"x": "y", "z": null}]}));
        let b = arguments_hash(&json!({"b": [1, {"z": null, "x": "y"}], "a": 1}));
        let c = arguments_hash(&json!({"a": 2, "b": [1, {"x": "y", "z": null}]}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }
}
