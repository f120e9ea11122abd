from graphrag_audit.cli.entry import main

main()
