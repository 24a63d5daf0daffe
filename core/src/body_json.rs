//! How a record body appears in JSON (traces, `--json` output): as a string when the bytes are
//! UTF-8, else as an array of bytes. Reading accepts either, so a body round-trips exactly and
//! traces written with byte arrays stay readable. Use with `#[serde(with = "crate::body_json")]`.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Serializer;
use std::fmt;

/// Writes `body` as text when it is UTF-8, else as its bytes.
pub fn serialize<S: Serializer>(body: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(body) {
        Ok(text) => serializer.serialize_str(text),
        Err(_) => serializer.collect_seq(body),
    }
}

/// Reads a body written as text or as an array of bytes.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_any(BodyVisitor)
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a body: a string or an array of bytes")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Vec<u8>, E> {
        Ok(text.as_bytes().to_vec())
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
        Ok(bytes.to_vec())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut body = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(byte) = seq.next_element::<u8>()? {
            body.push(byte);
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use crate::api::ReadRecord;
    use crate::record::{Command, Headers};

    /// A UTF-8 body is written as text, any other as bytes; both read back to the same bytes,
    /// and a body written as bytes (trace format 1) still reads.
    #[test]
    fn text_when_utf8_bytes_otherwise_and_both_read_back() {
        let text = Command::Write {
            body: b"w1".to_vec(),
            headers: Headers::default(),
        };
        let json = serde_json::to_string(&text).expect("serializes");
        assert_eq!(json, r#"{"Write":{"body":"w1","headers":{}}}"#);
        assert_eq!(serde_json::from_str::<Command>(&json).expect("reads"), text);

        let binary = ReadRecord {
            offset: 3,
            body: vec![0xff, 0x00, 0x41],
            headers: Headers::default(),
        };
        let json = serde_json::to_string(&binary).expect("serializes");
        assert_eq!(json, r#"{"offset":3,"body":[255,0,65],"headers":{}}"#);
        assert_eq!(
            serde_json::from_str::<ReadRecord>(&json).expect("reads"),
            binary
        );

        let old = r#"{"Write":{"body":[119,49],"headers":{}}}"#;
        assert_eq!(serde_json::from_str::<Command>(old).expect("reads"), text);
        let error = serde_json::from_str::<Command>(r#"{"Write":{"body":7,"headers":{}}}"#)
            .expect_err("a number is no body");
        assert!(
            error
                .to_string()
                .contains("expected a body: a string or an array of bytes"),
            "{error}"
        );
    }

    /// A format that hands the visitor raw bytes (not JSON, which has none) reads them as the body.
    #[test]
    fn raw_bytes_read_as_the_body() {
        use serde::de::value::{BytesDeserializer, Error};
        let body = super::deserialize(BytesDeserializer::<Error>::new(&[0xff, 0x00, 0x41]));
        assert_eq!(body, Ok(vec![0xff, 0x00, 0x41]));
    }
}
