//! Hooks built by name from configuration: a factory is called once with
//! its typed options and returns the handler.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Hook;
use crate::error::RuntimeError;

type Factory = Arc<dyn Fn(Value) -> Result<Hook, RuntimeError> + Send + Sync>;

/// Named hook factories.
#[derive(Clone, Default)]
pub struct HookFactories {
    factories: BTreeMap<String, Factory>,
}

impl HookFactories {
    /// No factories.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `make` under `name`; its options are deserialized into `O`.
    pub fn register<O, F>(&mut self, name: impl Into<String>, make: F) -> &mut Self
    where
        O: DeserializeOwned,
        F: Fn(O) -> Hook + Send + Sync + 'static,
    {
        let name = name.into();
        let factory_name = name.clone();
        self.factories.insert(
            name,
            Arc::new(move |options: Value| {
                let options = serde_json::from_value::<O>(options).map_err(|source| {
                    RuntimeError::HookOptions {
                        factory: factory_name.clone(),
                        source,
                    }
                })?;
                Ok(make(options))
            }),
        );
        self
    }

    /// Builds a hook from the factory `name` with `options`.
    ///
    /// # Errors
    /// [`RuntimeError::UnknownHookFactory`] or [`RuntimeError::HookOptions`].
    pub fn build(&self, name: &str, options: Value) -> Result<Hook, RuntimeError> {
        let factory = self
            .factories
            .get(name)
            .ok_or_else(|| RuntimeError::UnknownHookFactory {
                name: name.to_owned(),
                known: self
                    .factories
                    .keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        factory(options)
    }
}

impl fmt::Debug for HookFactories {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.factories.keys()).finish()
    }
}
