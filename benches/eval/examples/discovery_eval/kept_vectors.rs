//! The sentence encoder of the evaluation, keeping every vector it made:
//! a request is ranked against the whole catalog and again against the
//! catalogs with tools held out, and encoded once. With `--vectors FILE`
//! the vectors outlive the run (a file of text and vector pairs, tagged
//! with the encoder's id), so a second run encodes nothing.

use std::collections::HashMap;
use std::error::Error;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use iris::discovery::encoder::SentenceEncoder;
use iris::discovery::{EncodeError, TextEncoder};

/// Texts encoded at once when the evaluation encodes its requests.
const BATCH: usize = 64;

pub(crate) struct KeptVectors {
    encoder: SentenceEncoder,
    kept: Mutex<HashMap<String, Vec<f32>>>,
    file: Option<PathBuf>,
}

impl KeptVectors {
    /// The encoder in `folder`, with the vectors `file` kept for it.
    pub(crate) fn load(folder: &Path, file: Option<PathBuf>) -> Result<Self, Box<dyn Error>> {
        let started = std::time::Instant::now();
        let encoder = SentenceEncoder::from_folder(folder)?;
        eprintln!(
            "encoder loaded from {} in {:.1} s",
            folder.display(),
            started.elapsed().as_secs_f64()
        );
        let kept = match &file {
            Some(path) if path.exists() => read(path, TextEncoder::id(&encoder))?,
            _ => HashMap::new(),
        };
        Ok(Self {
            encoder,
            kept: Mutex::new(kept),
            file,
        })
    }

    /// Encodes every one of `texts` not kept yet, in batches, saying how
    /// far it got.
    pub(crate) fn encode_all(&self, texts: &[&str]) -> Result<(), Box<dyn Error>> {
        let missing: Vec<&str> = {
            let kept = self.kept.lock().map_err(|_| "poisoned")?;
            let mut seen = std::collections::HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !kept.contains_key(*t) && seen.insert(*t))
                .collect()
        };
        let started = std::time::Instant::now();
        for (i, batch) in missing.chunks(BATCH).enumerate() {
            self.encode(batch)?;
            if i % 32 == 31 {
                eprintln!("encoded {} of {} requests", (i + 1) * BATCH, missing.len());
            }
        }
        if !missing.is_empty() {
            eprintln!(
                "encoded {} requests in {:.1} s",
                missing.len(),
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }

    /// Writes the kept vectors to the `--vectors` file, if given.
    pub(crate) fn save(&self) -> Result<(), Box<dyn Error>> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let kept = self.kept.lock().map_err(|_| "poisoned")?;
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        write_text(&mut out, TextEncoder::id(&self.encoder))?;
        for (text, vector) in kept.iter() {
            write_text(&mut out, text)?;
            out.write_all(&u32::try_from(vector.len())?.to_le_bytes())?;
            for x in vector {
                out.write_all(&x.to_le_bytes())?;
            }
        }
        out.flush()?;
        Ok(())
    }
}

impl TextEncoder for KeptVectors {
    fn id(&self) -> &str {
        TextEncoder::id(&self.encoder)
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        let missing: Vec<&str> = {
            let kept = self.kept.lock().map_err(|_| EncodeError::new("poisoned"))?;
            texts
                .iter()
                .copied()
                .filter(|t| !kept.contains_key(*t))
                .collect()
        };
        let fresh = if missing.is_empty() {
            Vec::new()
        } else {
            TextEncoder::encode(&self.encoder, &missing)?
        };
        let mut kept = self.kept.lock().map_err(|_| EncodeError::new("poisoned"))?;
        for (text, vector) in missing.iter().zip(fresh) {
            kept.insert((*text).to_owned(), vector);
        }
        Ok(texts
            .iter()
            .map(|t| kept.get(*t).cloned().unwrap_or_default())
            .collect())
    }
}

fn write_text(out: &mut impl std::io::Write, text: &str) -> std::io::Result<()> {
    out.write_all(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes())?;
    out.write_all(text.as_bytes())
}

fn read_u32(input: &mut impl std::io::Read) -> std::io::Result<u32> {
    let mut bytes = [0_u8; 4];
    input.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

fn read_text(input: &mut impl std::io::Read) -> Result<String, Box<dyn Error>> {
    let mut bytes = vec![0_u8; read_u32(input)? as usize];
    input.read_exact(&mut bytes)?;
    Ok(String::from_utf8(bytes)?)
}

/// The vectors `path` keeps, when it was written for the encoder `id`;
/// none when another encoder wrote it.
fn read(path: &Path, id: &str) -> Result<HashMap<String, Vec<f32>>, Box<dyn Error>> {
    let mut input = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut kept = HashMap::new();
    if read_text(&mut input)? != id {
        eprintln!("{}: written by another encoder, not used", path.display());
        return Ok(kept);
    }
    loop {
        let text = match read_text(&mut input) {
            Ok(text) => text,
            Err(error)
                if error
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::UnexpectedEof) =>
            {
                break;
            }
            Err(error) => return Err(error),
        };
        let mut vector = vec![0.0_f32; read_u32(&mut input)? as usize];
        for x in &mut vector {
            let mut bytes = [0_u8; 4];
            input.read_exact(&mut bytes)?;
            *x = f32::from_le_bytes(bytes);
        }
        kept.insert(text, vector);
    }
    eprintln!("{} vectors read from {}", kept.len(), path.display());
    Ok(kept)
}
