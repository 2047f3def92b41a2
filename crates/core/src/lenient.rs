//! Reading another program's JSON without failing on what it adds or changes.
//!
//! Product CLIs add event types, item types and fields between releases, and a provider must
//! keep running when they do. A provider's wire types stay typed (serde enums tagged by `type`,
//! structs of the fields it reads) and become tolerant field by field with these helpers:
//! `#[serde(default, deserialize_with = "lenient::field")]` reads a field that is missing or holds
//! another JSON type than expected as its default instead of failing the whole event; [`object`]
//! does so for a field holding a struct or a tagged enum, read only from a JSON object (serde
//! would also read a struct from an array); [`objects`] for each element of a list of them;
//! [`present`] tells a field set to `null` from a missing one. [`Lenient`] and [`Object`] are the
//! same at the level of a value (a list element, a flattened event).
//!
//! Deliberately not here: the formats themselves. Each provider owns its CLI's wire types.

use serde::de::{Deserialize, Deserializer, IgnoredAny, Visitor};

/// A value read as `T` when it has `T`'s shape, or passed over when it does not.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum Lenient<T> {
    /// It had `T`'s shape.
    Read(T),
    /// It did not (any other JSON value).
    Other(IgnoredAny),
}

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Self::Other(IgnoredAny)
    }
}

impl<T> Lenient<T> {
    /// The value, if it had `T`'s shape.
    pub fn ok(self) -> Option<T> {
        match self {
            Self::Read(value) => Some(value),
            Self::Other(_) => None,
        }
    }

    /// The value, or `T`'s default if it did not have `T`'s shape.
    pub fn or_default(self) -> T
    where
        T: Default,
    {
        self.ok().unwrap_or_default()
    }
}

/// For `#[serde(default, deserialize_with = "…")]`: a field of another JSON type than `T` reads
/// as `T::default()`. Fails only where the input itself is not JSON.
pub fn field<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Lenient::<T>::deserialize(deserializer).map(Lenient::or_default)
}

/// A struct or tagged enum read only from a JSON object (serde's derive would also read a struct
/// from an array, field by field).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(deserializer)).map(Object)
    }
}

/// A deserializer that asks for a map whatever its caller asks for.
struct MapOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// For `#[serde(default, deserialize_with = "…")]` on a struct or tagged enum: anything but a
/// JSON object of `T`'s shape reads as `T::default()`.
pub fn object<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    field::<D, Object<T>>(deserializer).map(|Object(value)| value)
}

/// For `#[serde(default, deserialize_with = "…")]` on a list of structs or tagged enums: each
/// element that is not an object of `T`'s shape reads as `T::default()`, and a value that is not
/// a list as an empty one.
pub fn objects<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    let items: Vec<Lenient<Object<T>>> = field(deserializer)?;
    Ok(items.into_iter().map(|item| item.or_default().0).collect())
}

/// For `#[serde(default, deserialize_with = "…")]` on an `Option` of a type that reads any JSON
/// value (`serde_json::Value`, [`IgnoredAny`], a [`Lenient`]): `Some` whenever the field is
/// there, even as `null`; `None` only when it is missing.
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "field")]
        name: Option<String>,
        #[serde(default, deserialize_with = "field")]
        count: u64,
        #[serde(default, deserialize_with = "objects")]
        tags: Vec<Tag>,
        #[serde(default, deserialize_with = "object")]
        inner: Tag,
        #[serde(default, deserialize_with = "present")]
        error: Option<Value>,
    }

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    struct Tag {
        #[serde(default, deserialize_with = "field")]
        name: String,
    }

    fn tag(name: &str) -> Tag {
        Tag { name: name.into() }
    }

    fn probe(value: Value) -> Probe {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn fields_of_the_expected_types_are_read() {
        assert_eq!(
            probe(
                json!({"name": "a", "count": 3, "tags": [{"name": "x"}, {"name": "y"}],
                "inner": {"name": "z", "new": 2}, "error": "e", "new": 1})
            ),
            Probe {
                name: Some("a".into()),
                count: 3,
                tags: vec![tag("x"), tag("y")],
                inner: tag("z"),
                error: Some(json!("e")),
            }
        );
    }

    #[test]
    fn fields_of_other_types_read_as_their_defaults() {
        assert_eq!(
            probe(
                json!({"name": 5, "count": -1, "tags": [{"name": "x"}, ["y"], 2, null],
                "inner": ["z"], "error": null})
            ),
            Probe {
                name: None,
                count: 0,
                tags: vec![tag("x"), Tag::default(), Tag::default(), Tag::default()],
                inner: Tag::default(),
                error: Some(Value::Null),
            }
        );
        assert_eq!(
            probe(json!({"tags": {"name": "x"}, "count": 1.5, "inner": 1})),
            Probe::default()
        );
    }

    #[test]
    fn a_value_without_the_shape_is_passed_over() {
        let read: Vec<Lenient<u8>> = serde_json::from_value(json!([1, "x", 300])).unwrap();
        assert_eq!(
            read.into_iter().map(Lenient::ok).collect::<Vec<_>>(),
            vec![Some(1), None, None]
        );
    }

    /// A scalar, or a list or object of scalars.
    fn any_value() -> impl Strategy<Value = Value> {
        let scalar = || {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                ".{0,8}".prop_map(Value::from),
            ]
        };
        prop_oneof![
            scalar(),
            prop::collection::vec(scalar(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("name|.{0,3}", scalar(), 0..3)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    }

    proptest! {
        #[test]
        fn any_object_reads(
            fields in prop::collection::btree_map("name|count|tags|inner|error|.{0,4}", any_value(), 0..6)
        ) {
            let object = Value::Object(fields.into_iter().collect());
            prop_assert!(serde_json::from_str::<Probe>(&object.to_string()).is_ok());
        }
    }
}
