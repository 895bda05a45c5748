fn main() -> std::process::ExitCode {
    mco_host::cli::main()
}
