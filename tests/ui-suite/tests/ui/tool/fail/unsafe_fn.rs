/// Read raw memory.
#[iris::tool]
unsafe fn peek(address: usize) -> u8 {
    let _ = address;
    0
}

fn main() {}
