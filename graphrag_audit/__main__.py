from graphrag_audit.cli import main

main()
