print("grokctl")
