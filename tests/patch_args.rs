//! `Patch<T>`: leaving a property out, sending `null` and sending a value
//! are three different answers, including under a strict provider's nulls.

use iris::provider::{ProjectionNote, openai_chat};
use iris::{Patch, Tool};
use serde_json::json;

/// Change a contact.
#[iris::tool]
fn update_contact(
    /// The contact to change.
    id: String,
    /// The new nickname; `null` removes it, leaving it out keeps it.
    nickname: Patch<String>,
    /// Where to send mail.
    address: Option<Address>,
) -> String {
    let place = address.map(|a| (a.street, a.city));
    format!("{id} {nickname:?} {place:?}")
}

/// A postal address.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    /// The street, or `null` to remove it.
    #[serde(default)]
    street: Patch<String>,
    /// The city.
    city: String,
}

#[test]
fn left_out_null_and_a_value_are_keep_clear_and_set() {
    let keep = UpdateContact.parse(&json!({"id": "c1"})).expect("valid");
    let clear = UpdateContact
        .parse(&json!({"id": "c1", "nickname": null}))
        .expect("valid");
    let set = UpdateContact
        .parse(&json!({"id": "c1", "nickname": "Bo"}))
        .expect("valid");
    assert_eq!(keep.nickname, Patch::Keep);
    assert_eq!(clear.nickname, Patch::Clear);
    assert_eq!(set.nickname, Patch::Set("Bo".to_owned()));
    let wrong = UpdateContact
        .parse(&json!({"id": "c1", "nickname": 7}))
        .expect_err("a number is not a nickname");
    assert_eq!(wrong.path(), "$.nickname");
}

#[test]
fn a_nested_patch_keeps_its_null_where_an_optional_null_means_absent() {
    let args = UpdateContact
        .parse(&json!({"id": "c1", "nickname": null, "address": {"street": null, "city": "Oslo"}}))
        .expect("valid");
    assert_eq!(args.nickname, Patch::Clear);
    let address = args.address.expect("an address was sent");
    assert_eq!(address.street, Patch::Clear);
    let args = UpdateContact
        .parse(&json!({"id": "c1", "address": {"city": "Oslo"}}))
        .expect("valid");
    assert_eq!(args.address.expect("sent").street, Patch::Keep);
}

#[test]
fn the_schema_is_optional_and_nullable_and_strict_mode_declines_with_a_reason() {
    let schema = UpdateContact.definition().input_schema();
    assert_eq!(schema["required"], json!(["id"]));
    assert_eq!(
        schema["properties"]["nickname"]["type"],
        json!(["string", "null"])
    );
    let strict = openai_chat(&UpdateContact.definition().spec().with_strict(true));
    assert!(!strict.report.strict);
    let reason = strict.report.notes.iter().find_map(|note| match note {
        ProjectionNote::NotStrict { at, reason } => Some((at.clone(), reason.clone())),
        _ => None,
    });
    let (at, reason) = reason.expect("a reason is given");
    assert_eq!(at, "/properties/nickname");
    assert!(reason.contains("could never keep"), "{reason}");
    let gemini = iris::provider::gemini(&UpdateContact.definition().spec());
    assert!(!gemini.tool.to_string().contains("x-iris-patch"));
}

#[test]
fn apply_to_updates_an_optional_value() {
    let mut nickname = Some("Al".to_owned());
    Patch::Keep.apply_to(&mut nickname);
    assert_eq!(nickname.as_deref(), Some("Al"));
    Patch::Set("Bo".to_owned()).apply_to(&mut nickname);
    assert_eq!(nickname.as_deref(), Some("Bo"));
    Patch::<String>::Clear.apply_to(&mut nickname);
    assert_eq!(nickname, None);
    assert_eq!(Patch::Set(1).into_option(), Some(Some(1)));
}
