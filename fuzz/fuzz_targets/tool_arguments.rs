#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iris::__fuzz::tool_arguments(data));
