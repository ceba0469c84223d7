from web.cli import main

main()
