from bleucli.sacrebleu_compat.sacrebleu import main

if __name__ == "__main__":
    main()
