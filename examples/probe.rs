fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let format = flowdeck::workflow::Format::from_file_name(&path).unwrap();
        let c = flowdeck::workflow::check_bytes(&bytes, format);
        println!("{path}: valid={}", c.is_valid());
        for v in &c.violations {
            println!("  {}", v.to_line(&path));
        }
    }
}
