//! The output schema of a `#[tool]`, picked at compile time from its
//! declared return type.
//!
//! Method resolution through auto-ref picks the first that applies:
//! `Json<T>` and `Result<Json<T>, E>` with `T: JsonSchema` give `T`'s schema;
//! any other [`IntoToolResult`] gives none (text, images, a hand-made
//! result: no `data` of a known shape); `Result<T: JsonSchema, E>` gives
//! `T`'s; any other `T: JsonSchema` its own; anything else none. What is
//! picked is a function, called once when the definition is first built.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde_json::Value;

use crate::into_result::{IntoToolResult, Json};
use crate::schema::output_schema_for;

/// How the output schema is made, when one is known.
pub type OutputSchemaFn = Option<fn() -> Value>;

/// Stands for a return type `T` while its schema is picked.
pub struct OutputOf<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> OutputOf<T> {
    /// The probe of `T`.
    pub const NEW: Self = Self(PhantomData);

    /// Last choice: no schema is known for `T`.
    #[must_use]
    pub fn __iris_output_schema(&self) -> OutputSchemaFn {
        None
    }
}

/// First choice: `Json<T>` or `Result<Json<T>, E>` with `T: JsonSchema`.
pub trait OutputViaJson {
    /// How the schema of `data` is made.
    fn __iris_output_schema(&self) -> OutputSchemaFn;
}

impl<T: JsonSchema> OutputViaJson for &&&&OutputOf<Json<T>> {
    fn __iris_output_schema(&self) -> OutputSchemaFn {
        Some(output_schema_for::<T>)
    }
}

impl<T: JsonSchema, E> OutputViaJson for &&&&OutputOf<Result<Json<T>, E>> {
    fn __iris_output_schema(&self) -> OutputSchemaFn {
        Some(output_schema_for::<T>)
    }
}

/// Second choice: any other [`IntoToolResult`] has no known `data` shape.
pub trait OutputViaIntoToolResult {
    /// How the schema of `data` is made.
    fn __iris_output_schema(&self) -> OutputSchemaFn;
}

impl<T: IntoToolResult> OutputViaIntoToolResult for &&&OutputOf<T> {
    fn __iris_output_schema(&self) -> OutputSchemaFn {
        None
    }
}

/// Third choice: `Result<T: JsonSchema, E>`, whose `Ok` value is `data`.
pub trait OutputViaOk {
    /// How the schema of `data` is made.
    fn __iris_output_schema(&self) -> OutputSchemaFn;
}

impl<T: JsonSchema, E> OutputViaOk for &&OutputOf<Result<T, E>> {
    fn __iris_output_schema(&self) -> OutputSchemaFn {
        Some(output_schema_for::<T>)
    }
}

/// Fourth choice: any `T: JsonSchema`, serialized as `data`.
pub trait OutputViaSchema {
    /// How the schema of `data` is made.
    fn __iris_output_schema(&self) -> OutputSchemaFn;
}

impl<T: JsonSchema> OutputViaSchema for &OutputOf<T> {
    fn __iris_output_schema(&self) -> OutputSchemaFn {
        Some(output_schema_for::<T>)
    }
}

#[cfg(test)]
#[allow(
    clippy::needless_borrow,
    reason = "the probe's references are what picks the schema"
)]
mod tests {
    use serde::Serialize;

    use super::*;
    use crate::ToolResult;

    #[derive(Serialize, JsonSchema)]
    struct Forecast {
        celsius: f64,
    }

    #[derive(Serialize)]
    struct Unschematic {
        n: u8,
    }

    fn picked<T: ?Sized>(probe: OutputSchemaFn) -> Option<Value> {
        let _ = OutputOf::<T>::NEW;
        probe.map(|make| make())
    }

    #[test]
    fn the_return_type_picks_the_schema() {
        let forecast = Some(output_schema_for::<Forecast>());
        assert_eq!(
            picked::<Forecast>((&&&&&OutputOf::<Forecast>::NEW).__iris_output_schema()),
            forecast
        );
        assert_eq!(
            picked::<()>((&&&&&OutputOf::<Result<Forecast, String>>::NEW).__iris_output_schema()),
            forecast
        );
        assert_eq!(
            picked::<()>((&&&&&OutputOf::<Json<Forecast>>::NEW).__iris_output_schema()),
            forecast
        );
        assert_eq!(
            picked::<()>(
                (&&&&&OutputOf::<Result<Json<Forecast>, String>>::NEW).__iris_output_schema()
            ),
            forecast
        );
        assert_eq!(
            picked::<()>((&&&&&OutputOf::<String>::NEW).__iris_output_schema()),
            None
        );
        assert_eq!(
            picked::<()>((&&&&&OutputOf::<ToolResult>::NEW).__iris_output_schema()),
            None
        );
        assert_eq!(
            picked::<()>(
                (&&&&&OutputOf::<Result<String, std::io::Error>>::NEW).__iris_output_schema()
            ),
            None
        );
        assert_eq!(
            picked::<()>((&&&&&OutputOf::<Unschematic>::NEW).__iris_output_schema()),
            None
        );
        assert_eq!(
            picked::<()>(
                (&&&&&OutputOf::<Result<Unschematic, String>>::NEW).__iris_output_schema()
            ),
            None
        );
    }
}
