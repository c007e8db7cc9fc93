fn main() {
    let schema = flowdeck::workflow::schema::workflow_schema_text();
    print!("{schema}");
}
