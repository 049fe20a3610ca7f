from taskfs.cli import main

main()
