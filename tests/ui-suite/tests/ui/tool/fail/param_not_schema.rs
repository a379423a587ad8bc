struct Secret {
    value: String,
}

/// Reveal a secret.
#[iris::tool]
fn reveal(secret: Secret) -> String {
    secret.value
}

fn main() {}
