"""``python -m bleucli`` runs the command-line tool."""

from bleucli.cli.launch import main

if __name__ == "__main__":
    main()
