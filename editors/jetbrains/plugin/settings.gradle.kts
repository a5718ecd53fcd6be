rootProject.name = "agentls-jetbrains"
