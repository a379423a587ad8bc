//! Reading one HTTP/1.1 request off a connection, for the tests' loopback
//! servers (the scripted model endpoint, the OTLP receiver): its path and
//! its body, by `Content-Length`.

use std::io::BufRead;

/// The next request on `reader`: its path and body, or `None` when the
/// connection closed or broke off.
pub(crate) fn read_request(reader: &mut impl BufRead) -> Option<(String, Vec<u8>)> {
    let mut length = 0;
    let mut path = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if path.is_none() {
            path = Some(line.split(' ').nth(1).unwrap_or_default().to_owned());
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((path.unwrap_or_default(), body))
}
