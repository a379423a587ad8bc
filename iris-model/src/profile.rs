//! The dialects of the servers that speak OpenAI Chat Completions. Each
//! named [`ServerProfile`] is a small table of what that server accepts in
//! a request (which `tool_choice` values it honours, whether it takes
//! `parallel_tool_calls`, what it calls the token limit, whether it reports
//! usage in a stream when asked). How a server bends its answers (whole
//! calls in a first chunk, missing or numeric ids, index gaps, arguments as
//! objects, `stop` after calls) is read by the same defensive rules for
//! every profile, since any of them may change its ways in a release.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ToolChoice;

/// The server behind an OpenAI Chat Completions endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerProfile {
    /// OpenAI's own API (and servers that follow it to the letter).
    #[default]
    Openai,
    /// llama.cpp's `llama-server` (started with `--jinja` and a template
    /// that knows tools).
    LlamaCpp,
    /// vLLM's OpenAI-compatible server (with a tool-call parser chosen by
    /// `--tool-call-parser`).
    Vllm,
    /// Ollama's OpenAI-compatible endpoint (`/v1`).
    Ollama,
    /// LM Studio's local server.
    LmStudio,
}

/// What one server accepts in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dialect {
    /// The `tool_choice` values the server honours; another one is left
    /// out of the request (with a warning), since servers that do not know
    /// it treat it as `auto` without saying so.
    pub tool_choices: &'static [ToolChoice],
    /// Whether the server takes `parallel_tool_calls`.
    pub parallel_tool_calls: bool,
    /// The field of the answer's token limit.
    pub max_tokens_field: &'static str,
    /// Whether a streamed answer reports usage when asked with
    /// `stream_options.include_usage`.
    pub stream_usage: bool,
}

const ALL_CHOICES: &[ToolChoice] = &[ToolChoice::Auto, ToolChoice::None, ToolChoice::Required];

impl ServerProfile {
    /// The profile's name in an agent file.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::LlamaCpp => "llama_cpp",
            Self::Vllm => "vllm",
            Self::Ollama => "ollama",
            Self::LmStudio => "lm_studio",
        }
    }

    /// What this server accepts.
    #[must_use]
    pub fn dialect(self) -> Dialect {
        match self {
            Self::Openai => Dialect {
                tool_choices: ALL_CHOICES,
                parallel_tool_calls: true,
                max_tokens_field: "max_completion_tokens",
                stream_usage: true,
            },
            // llama.cpp takes `required`, but enforces it only where its
            // template's call format has a grammar; vLLM honours it with a
            // guided-decoding backend.
            Self::LlamaCpp | Self::Vllm => Dialect {
                tool_choices: ALL_CHOICES,
                parallel_tool_calls: true,
                max_tokens_field: "max_tokens",
                stream_usage: true,
            },
            // Ollama's compatibility layer lists `tool_choice` and
            // `parallel_tool_calls` among the fields it does not support.
            Self::Ollama => Dialect {
                tool_choices: &[ToolChoice::Auto],
                parallel_tool_calls: false,
                max_tokens_field: "max_tokens",
                stream_usage: true,
            },
            Self::LmStudio => Dialect {
                tool_choices: ALL_CHOICES,
                parallel_tool_calls: false,
                max_tokens_field: "max_tokens",
                stream_usage: false,
            },
        }
    }
}
